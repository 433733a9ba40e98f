//! Behaviour of the configuration table, CONFIG GET/SET/REWRITE and the command line,
//! checked against what redis-server 7.0.15 does.
//!
//! One file per topic; this one holds the helpers they share.

mod cli;
mod config_get;
mod config_set;
mod defaults;
mod rewrite;
mod values;

use super::*;
use std::path::PathBuf;

fn set(c: &mut Config, pairs: &[(&str, &str)]) -> Result<Vec<&'static str>, String> {
    let pairs: Vec<(&[u8], &[u8])> = pairs
        .iter()
        .map(|(n, v)| (n.as_bytes(), v.as_bytes()))
        .collect();
    c.set_many(&pairs)
}

fn get(c: &Config, patterns: &[&str]) -> Vec<(String, String)> {
    let p: Vec<&[u8]> = patterns.iter().map(|s| s.as_bytes()).collect();
    c.get_matching(&p)
}

/// The command names these tests rename (the real lookup is the command table's).
fn known_command(name: &str) -> bool {
    ["get", "set", "del", "ping", "config", "flushall", "keys"].contains(&name)
}

fn cli(args: &[&str]) -> Result<Startup, Fatal> {
    cli_stdin(args, "")
}

fn cli_stdin(args: &[&str], stdin: &str) -> Result<Startup, Fatal> {
    let mut argv = vec!["resplock".to_string()];
    argv.extend(args.iter().map(|s| s.to_string()));
    parse_command_line(&argv, stdin.as_bytes(), known_command)
}

fn fatal(args: &[&str]) -> String {
    cli(args).expect_err("should be refused").render()
}

/// A scratch directory for file tests, removed on drop.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let d = std::env::temp_dir().join(format!(
            "resplock-config-{tag}-{}-{}",
            std::process::id(),
            fastrand::u64(..)
        ));
        std::fs::create_dir_all(&d).unwrap();
        TempDir(d)
    }
    fn file(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Config {
    fn with_dir(mut self, d: Option<PathBuf>) -> Config {
        self.dir = d;
        self
    }
}
