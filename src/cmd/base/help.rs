//! The reply of a container's HELP subcommand (CLIENT HELP, CONFIG HELP...).

use crate::reply::Reply;

/// A HELP reply: status lines, as Redis's addReplyHelp.
pub fn help_reply(lines: &[&'static str]) -> Reply {
    Reply::Array(lines.iter().map(|l| Reply::simple(l)).collect())
}
