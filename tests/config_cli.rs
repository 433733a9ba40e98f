//! The `resplock` binary's command line, run as a subprocess: the FATAL texts and exit
//! codes redis-server 7.0.15 gives, --version, --help, config files with overrides, stdin.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_resplock"));
    c.env_remove("RESPLOCK_LOG");
    c
}

fn run(args: &[&str]) -> Output {
    bin()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run resplock")
}

fn run_stdin(args: &[&str], input: &str) -> Output {
    let mut child = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn resplock");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn fatal_block(line: usize, directive: &str, reason: &str) -> String {
    format!(
        "\n*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***\nReading the configuration file, at line {line}\n>>> '{directive}'\n{reason}\n"
    )
}

fn assert_fatal(args: &[&str], want: &str) {
    let out = run(args);
    assert_eq!(out.status.code(), Some(1), "{args:?}");
    assert_eq!(text(&out.stderr), want, "{args:?}");
    assert_eq!(text(&out.stdout), "", "{args:?}");
}

#[test]
fn unknown_directive_is_fatal_with_redis_text_and_exit_1() {
    assert_fatal(
        &["--port", "7301", "--foo", "bar"],
        &fatal_block(
            3,
            "foo \"bar\"",
            "Bad directive or wrong number of arguments",
        ),
    );
}

#[test]
fn bad_values_are_fatal_like_redis() {
    assert_fatal(
        &["--notify-keyspace-events", "Z"],
        &fatal_block(
            2,
            "notify-keyspace-events \"Z\"",
            "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.",
        ),
    );
    assert_fatal(
        &["--databases", "0"],
        &fatal_block(
            2,
            "databases \"0\"",
            "argument must be between 1 and 2147483647 inclusive",
        ),
    );
    assert_fatal(
        &["--maxclients", "0"],
        &fatal_block(
            2,
            "maxclients \"0\"",
            "argument must be between 1 and 4294967295 inclusive",
        ),
    );
    assert_fatal(
        &["--port", "70000"],
        &fatal_block(
            2,
            "port \"70000\"",
            "argument must be between 0 and 65535 inclusive",
        ),
    );
    assert_fatal(
        &["--maxmemory", "1x"],
        &fatal_block(2, "maxmemory \"1x\"", "argument must be a memory value"),
    );
    assert_fatal(
        &["--user", "foo", "--user", "foo"],
        &fatal_block(
            3,
            "user \"foo\"",
            "Error in user declaration 'foo': Duplicate user found. A user can only be defined once in config files",
        ),
    );
}

#[test]
fn unreadable_config_file_is_logged_on_stdout_and_exits_1() {
    let out = run(&["/nonexistent/resplock.conf"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.ends_with(" # Fatal error, can't open config file '/nonexistent/resplock.conf': No such file or directory\n"),
        "{stdout}"
    );
}

#[test]
fn version_prints_redis_style_line_and_exits_0() {
    for flag in ["--version", "-v"] {
        let out = run(&[flag]);
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(
            text(&out.stdout),
            format!(
                "Redis server v=7.0.15 sha=00000000:0 malloc=libc bits={} build=resplock-{}\n",
                usize::BITS,
                env!("CARGO_PKG_VERSION")
            )
        );
    }
}

#[test]
fn help_prints_usage_on_stderr_and_exits_1() {
    for flag in ["--help", "-h"] {
        let out = run(&[flag]);
        assert_eq!(out.status.code(), Some(1));
        let err = text(&out.stderr);
        assert!(
            err.starts_with("Usage: ./resplock [/path/to/redis.conf] [options] [-]\n"),
            "{err}"
        );
        assert!(err.contains("echo 'maxmemory 128mb' | ./resplock -\n"));
    }
}

#[test]
fn test_memory_is_refused_clearly() {
    let out = run(&["--test-memory", "16"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--test-memory is not supported"));
}

/// A running server: killed on drop.
struct Server {
    child: Child,
    addr: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start the binary and wait for its log lines: the port from `Running mode=standalone,
/// port=N.`, then `Ready to accept connections tcp` (it listens on 127.0.0.1).
fn serve(args: &[&str], stdin: Option<&str>) -> Server {
    let mut child = bin()
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn resplock");
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(input.as_bytes()).unwrap();
    }
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut port = None;
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        if out.read_line(&mut line).unwrap() == 0 {
            let mut err = String::new();
            let _ = child.stderr.take().unwrap().read_to_string(&mut err);
            panic!("no ready line: {seen} {err}");
        }
        seen.push_str(&line);
        if let Some(p) = line.split("port=").nth(1) {
            port = Some(p.trim().trim_end_matches('.').to_string());
        }
        if line.contains("Ready to accept connections tcp") {
            break;
        }
    }
    // Keep draining the log so the server never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    Server {
        addr: format!("127.0.0.1:{}", port.expect("port line")),
        child,
    }
}

/// Send one command in RESP and return the first reply line.
fn call(addr: &str, args: &[&str]) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut req = format!("*{}\r\n", args.len());
    for a in args {
        req.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    s.write_all(req.as_bytes()).unwrap();
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).unwrap();
    line.trim_end().to_string()
}

#[test]
fn port_0_picks_a_free_port() {
    let srv = serve(&["--port", "0", "--save", "", "--appendonly", "no"], None);
    assert!(!srv.addr.ends_with(":0"), "{}", srv.addr);
    assert_eq!(call(&srv.addr, &["PING"]), "+PONG");
}

#[test]
fn config_file_plus_overrides() {
    let dir = std::env::temp_dir().join(format!("resplock-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let conf = dir.join("r.conf");
    std::fs::write(
        &conf,
        "# a config file\nport 6399\nrequirepass fromfile\ndatabases 2\nbind 127.0.0.1\n",
    )
    .unwrap();
    let srv = serve(
        &[
            conf.to_str().unwrap(),
            "--port",
            "0",
            "--requirepass",
            "fromcli",
        ],
        None,
    );
    assert!(call(&srv.addr, &["PING"]).starts_with("-NOAUTH"));
    assert!(call(&srv.addr, &["AUTH", "fromfile"]).starts_with("-WRONGPASS"));
    assert_eq!(call(&srv.addr, &["AUTH", "fromcli"]), "+OK");
    drop(srv);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn config_from_stdin() {
    let srv = serve(&["-"], Some("port 0\nrequirepass piped\n"));
    assert!(call(&srv.addr, &["PING"]).starts_with("-NOAUTH"));
    assert_eq!(call(&srv.addr, &["AUTH", "piped"]), "+OK");
}

#[test]
fn stdin_config_errors_are_fatal() {
    let out = run_stdin(&["-"], "port 7302\nfoo bar\n");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        fatal_block(2, "foo bar", "Bad directive or wrong number of arguments")
    );
}
