//! resplock's own command-line options, which redis-server does not have. They are taken
//! out of the command line before redis-server's rules parse the rest, so a redis-server
//! command line with any of them added still means what it meant.
//!
//! - `--enable-test-commands yes|no`: serve the `RESPLOCK.*` test commands (off by default).
//! - `--instances N`: start N independent servers in one process (ports P..P+N-1 from
//!   `--port P`, or N free ports with `--port 0`), printing one address per line.
//! - `--cluster N [--replicas R]`: start a Redis Cluster of N masters with R replicas each
//!   in one process (ports P.. or free ones, masters first), printing one address per line.
//! - `--healthcheck [host:]port`: send PING to a server and exit 0 on PONG (a container's
//!   HEALTHCHECK, with no shell or redis-cli in the image).
//! - `--container` (first, as the image's entrypoint): the official redis image's
//!   docker-entrypoint.sh rules without a shell: a leading `redis-server` or `resplock` word
//!   is dropped, and a server started without a config file listens on every interface with
//!   protected mode off (the options given later still win).

/// What [`take_own_args`] found.
///
/// ```
/// let mut argv: Vec<String> = ["resplock", "--enable-test-commands", "yes", "--healthcheck", "6390"]
///     .iter().map(|s| s.to_string()).collect();
/// let own = resplock::config::take_own_args(&mut argv).unwrap();
/// let want = resplock::config::OwnArgs {
///     enable_test_commands: true,
///     instances: None,
///     cluster: None,
///     replicas: 0,
///     healthcheck: Some("6390".into()),
/// };
/// assert_eq!(own, want);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OwnArgs {
    /// `--enable-test-commands yes`.
    pub enable_test_commands: bool,
    /// `--instances N` (None: one server, the usual process).
    pub instances: Option<usize>,
    /// `--cluster N`: a cluster of N masters (None: no cluster).
    pub cluster: Option<usize>,
    /// `--replicas R`: replicas per master of `--cluster` (0 by default).
    pub replicas: usize,
    /// `--healthcheck ADDR`: check that server instead of serving.
    pub healthcheck: Option<String>,
}

/// Remove resplock's own options from `argv` (which keeps `argv[0]`), returning them; an
/// error is the line to print before exiting with status 1.
///
/// ```
/// let mut argv: Vec<String> = ["resplock", "--port", "0", "--instances", "3"]
///     .iter().map(|s| s.to_string()).collect();
/// let own = resplock::config::take_own_args(&mut argv).unwrap();
/// assert_eq!(own.instances, Some(3));
/// assert_eq!(argv, ["resplock", "--port", "0"]);
/// ```
pub fn take_own_args(argv: &mut Vec<String>) -> Result<OwnArgs, String> {
    if argv.get(1).is_some_and(|a| a == "--container") {
        container_args(argv);
    }
    let mut own = OwnArgs::default();
    let mut i = 1;
    while i < argv.len() {
        let name = argv[i].to_ascii_lowercase();
        let value = argv.get(i + 1).cloned();
        match name.as_str() {
            "--enable-test-commands" => {
                own.enable_test_commands = match value.as_deref().map(str::to_ascii_lowercase) {
                    Some(v) if v == "yes" => true,
                    Some(v) if v == "no" => false,
                    _ => return Err("--enable-test-commands takes yes or no".into()),
                };
            }
            "--instances" => {
                own.instances = match value.as_deref().and_then(|v| v.parse::<usize>().ok()) {
                    Some(n) if (1..=1000).contains(&n) => Some(n),
                    _ => return Err("--instances takes a number from 1 to 1000".into()),
                };
            }
            "--cluster" => {
                own.cluster = match value.as_deref().and_then(|v| v.parse::<usize>().ok()) {
                    Some(n) if (1..=100).contains(&n) => Some(n),
                    _ => return Err("--cluster takes a number of masters from 1 to 100".into()),
                };
            }
            "--replicas" => {
                own.replicas = match value.as_deref().and_then(|v| v.parse::<usize>().ok()) {
                    Some(n) if n <= 10 => n,
                    _ => return Err("--replicas takes a number from 0 to 10".into()),
                };
            }
            "--healthcheck" => {
                // The address is optional: the container's default port when absent.
                match value.filter(|v| !v.starts_with("--")) {
                    Some(v) => {
                        own.healthcheck = Some(v);
                    }
                    None => {
                        own.healthcheck = Some("127.0.0.1:6379".into());
                        argv.remove(i);
                        continue;
                    }
                }
            }
            _ => {
                i += 1;
                continue;
            }
        }
        argv.drain(i..i + 2);
    }
    if own.cluster.is_some() && own.instances.is_some() {
        return Err("--cluster and --instances cannot be used together".into());
    }
    if own.replicas > 0 && own.cluster.is_none() {
        return Err("--replicas needs --cluster".into());
    }
    Ok(own)
}

/// The image's entrypoint rules (see the module documentation), applied to `argv` whose
/// `argv[1]` is `--container`.
fn container_args(argv: &mut Vec<String>) {
    argv.remove(1);
    if argv
        .get(1)
        .is_some_and(|a| a == "redis-server" || a == "resplock")
    {
        argv.remove(1);
    }
    // No config file (nothing, or an option first): the official image's defaults.
    if argv.get(1).is_none_or(|a| a.starts_with('-')) {
        let defaults = ["--bind", "* -::*", "--protected-mode", "no"];
        argv.splice(1..1, defaults.iter().map(|s| s.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn own_options_are_taken_out_and_the_rest_left_for_redis_rules() {
        let mut a = argv(&[
            "resplock",
            "redis.conf",
            "--enable-test-commands",
            "YES",
            "--port",
            "7000",
            "--instances",
            "3",
        ]);
        let own = take_own_args(&mut a).unwrap();
        assert!(own.enable_test_commands);
        assert_eq!(own.instances, Some(3));
        assert_eq!(a, argv(&["resplock", "redis.conf", "--port", "7000"]));
    }

    #[test]
    fn cluster_options_are_taken_out() {
        let mut a = argv(&[
            "resplock",
            "--cluster",
            "3",
            "--port",
            "0",
            "--replicas",
            "1",
        ]);
        let own = take_own_args(&mut a).unwrap();
        assert_eq!((own.cluster, own.replicas), (Some(3), 1));
        assert_eq!(a, argv(&["resplock", "--port", "0"]));
    }

    #[test]
    fn bad_values_are_refused() {
        for bad in [
            &["resplock", "--instances", "0"][..],
            &["resplock", "--instances"],
            &["resplock", "--enable-test-commands", "maybe"],
            &["resplock", "--cluster", "0"],
            &["resplock", "--cluster", "3", "--instances", "3"],
            &["resplock", "--replicas", "1"],
            &["resplock", "--cluster", "3", "--replicas", "x"],
        ] {
            assert!(take_own_args(&mut argv(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_container_entrypoint_follows_the_official_images_rules() {
        let open = ["--bind", "* -::*", "--protected-mode", "no"];
        let mut a = argv(&["resplock", "--container"]);
        take_own_args(&mut a).unwrap();
        assert_eq!(a[1..], open);
        let mut a = argv(&["resplock", "--container", "redis-server", "--port", "1"]);
        take_own_args(&mut a).unwrap();
        assert_eq!(a[1..5], open);
        assert_eq!(a[5..], ["--port", "1"]);
        let mut a = argv(&["resplock", "--container", "/r.conf", "--port", "1"]);
        take_own_args(&mut a).unwrap();
        assert_eq!(a, argv(&["resplock", "/r.conf", "--port", "1"]));
        let mut a = argv(&["resplock", "--container", "resplock", "--instances", "3"]);
        assert_eq!(take_own_args(&mut a).unwrap().instances, Some(3));
        assert_eq!(a[1..], open);
    }

    #[test]
    fn healthcheck_defaults_to_the_standard_port() {
        let mut a = argv(&["resplock", "--healthcheck"]);
        assert_eq!(
            take_own_args(&mut a).unwrap().healthcheck.as_deref(),
            Some("127.0.0.1:6379")
        );
        let mut a = argv(&["resplock", "--healthcheck", "6380"]);
        assert_eq!(
            take_own_args(&mut a).unwrap().healthcheck.as_deref(),
            Some("6380")
        );
        assert_eq!(a, argv(&["resplock"]));
    }
}
