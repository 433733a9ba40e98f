//! The binary run as redis-server is run in CI scripts and harnesses, as a subprocess: the unix
//! socket and its mode, several bind addresses, the port rules, daemon mode with its pid file,
//! the log file and Redis's log lines, log levels, protected mode, the idle timeout and the
//! lines and files at shutdown.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_resplock"))
}

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!(
            "resplock-proc-{tag}-{}-{}",
            std::process::id(),
            fastrand::u32(..)
        ));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A foreground server whose standard output (its log) is collected line by line.
struct Server {
    child: Child,
    log: std::sync::mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Server {
    /// Start `resplock ARGS`, on loopback and without save points unless `args` say
    /// otherwise (Redis's defaults would listen everywhere and save into the working
    /// directory at shutdown).
    fn start(args: &[&str]) -> Server {
        let mut child = bin()
            .args(["--bind", "127.0.0.1", "--save", ""])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn resplock");
        let out = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Server {
            child,
            log: rx,
            seen: Vec::new(),
        }
    }

    /// Wait (at most 10 s) for a log line containing `text`; returns it.
    fn wait_line(&mut self, text: &str) -> String {
        if let Some(l) = self.seen.iter().find(|l| l.contains(text)) {
            return l.clone();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.log.recv_timeout(left) {
                Ok(l) => {
                    self.seen.push(l.clone());
                    if l.contains(text) {
                        return l;
                    }
                }
                Err(_) => break,
            }
        }
        panic!("no log line with {text:?}; saw {:#?}", self.seen);
    }

    /// The TCP port from `Running mode=standalone, port=N.`.
    fn port(&mut self) -> u16 {
        let l = self.wait_line("Running mode=standalone, port=");
        l.rsplit("port=")
            .next()
            .unwrap()
            .trim_end_matches('.')
            .parse()
            .unwrap()
    }

    /// Every line logged until the process exits (at most 10 s), and its exit status.
    fn finish(mut self) -> (Vec<String>, Option<i32>) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.log.recv_timeout(left) {
                Ok(l) => self.seen.push(l),
                Err(_) => break,
            }
        }
        let status = wait_exit(&mut self.child);
        (std::mem::take(&mut self.seen), status)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_exit(child: &mut Child) -> Option<i32> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Some(s) = child.try_wait().unwrap() {
            return s.code();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// Send one command and read one reply line (RESP, simple replies only).
fn call(stream: &mut (impl Read + Write), args: &[&str]) -> String {
    let mut req = format!("*{}\r\n", args.len());
    for a in args {
        req.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    stream.write_all(req.as_bytes()).unwrap();
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n") {
        if stream.read(&mut byte).unwrap() == 0 {
            break;
        }
        buf.push(byte[0]);
    }
    String::from_utf8_lossy(&buf).trim_end().to_string()
}

fn tcp(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

fn unix(path: &Path) -> UnixStream {
    let s = UnixStream::connect(path).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s
}

/// A port nothing listens on right now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `PID:R DD Mon YYYY HH:MM:SS.mmm C message`, as redis-server writes its log.
fn assert_redis_log_line(line: &str) {
    let (pid, rest) = line.split_once(':').expect("pid");
    assert!(pid.parse::<u32>().is_ok(), "{line}");
    let b = rest.as_bytes();
    assert!(matches!(b[0], b'M' | b'C'), "{line}");
    let parts: Vec<&str> = rest[2..].splitn(6, ' ').collect();
    assert_eq!(parts[0].len(), 2, "{line}");
    assert_eq!(parts[1].len(), 3, "{line}");
    assert_eq!(parts[2].len(), 4, "{line}");
    assert_eq!(parts[3].len(), "HH:MM:SS.mmm".len(), "{line}");
    assert!(matches!(parts[4], "." | "-" | "*" | "#"), "{line}");
}

#[test]
fn port_0_with_unixsocket_listens_on_the_socket_only_with_its_mode() {
    let dir = TempDir::new("unix");
    let sock = dir.path("redis.sock");
    let mut srv = Server::start(&[
        "--port",
        "0",
        "--unixsocket",
        sock.to_str().unwrap(),
        "--unixsocketperm",
        "700",
        "--save",
        "",
    ]);
    let ready = srv.wait_line("The server is now ready to accept connections at ");
    assert!(ready.ends_with(sock.to_str().unwrap()), "{ready}");
    srv.wait_line("Ready to accept connections unix");
    assert!(!srv.seen.iter().any(|l| l.contains("connections tcp")));
    let mode = std::fs::metadata(&sock).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    let mut c = unix(&sock);
    assert_eq!(call(&mut c, &["PING"]), "+PONG");
    assert_eq!(call(&mut c, &["CONFIG", "GET", "port"]), "*2");
    // CLIENT INFO over the socket: the path as address, the U flag.
    let mut c2 = unix(&sock);
    let info = call(&mut c2, &["CLIENT", "INFO"]);
    assert!(info.starts_with('$'), "{info}");
    let mut line = String::new();
    BufReader::new(&mut c2).read_line(&mut line).unwrap();
    assert!(
        line.contains(&format!("addr={}:0 ", sock.display())),
        "{line}"
    );
    assert!(line.contains(" flags=U "), "{line}");
}

#[test]
fn port_0_without_unixsocket_picks_a_free_port_and_logs_it() {
    let mut srv = Server::start(&["--port", "0"]);
    let port = srv.port();
    assert_ne!(port, 0);
    srv.wait_line("Ready to accept connections tcp");
    assert_eq!(call(&mut tcp(port), &["PING"]), "+PONG");
}

#[test]
fn startup_lines_are_redis_log_lines_in_redis_order() {
    let mut srv = Server::start(&["--port", "0", "--save", ""]);
    srv.wait_line("Ready to accept connections tcp");
    let lines = srv.seen.clone();
    for l in &lines {
        assert_redis_log_line(l);
    }
    let pos = |t: &str| lines.iter().position(|l| l.contains(t)).unwrap();
    assert!(pos("Redis is starting") < pos("Configuration loaded"));
    assert!(pos("Configuration loaded") < pos("Server initialized"));
    assert!(pos("Server initialized") < pos("Ready to accept connections tcp"));
    assert!(lines[pos("Server initialized")].contains(":M "));
    assert!(lines[pos("Redis is starting")].contains(":C "));
}

#[test]
fn several_bind_addresses_each_listen_on_the_port() {
    let port = free_port();
    let p = port.to_string();
    let mut srv = Server::start(&["--port", &p, "--bind", "127.0.0.1", "127.0.0.2"]);
    srv.wait_line("Ready to accept connections tcp");
    for ip in ["127.0.0.1", "127.0.0.2"] {
        let mut s = TcpStream::connect((ip, port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        assert_eq!(call(&mut s, &["PING"]), "+PONG", "{ip}");
    }
}

#[test]
fn taken_port_fails_with_redis_lines_and_exit_1() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let srv = Server::start(&["--port", &port.to_string()]);
    let (lines, code) = srv.finish();
    assert_eq!(code, Some(1), "{lines:#?}");
    assert!(
        lines.iter().any(|l| l.ends_with(&format!(
            "# Warning: Could not create server TCP listening socket 127.0.0.1:{port}: bind: Address already in use"
        ))),
        "{lines:#?}"
    );
    assert!(
        lines.iter().any(|l| l.ends_with(&format!(
            "# Failed listening on port {port} (TCP), aborting."
        ))),
        "{lines:#?}"
    );
    drop(taken);
}

#[test]
fn empty_bind_without_socket_refuses_to_start() {
    let srv = Server::start(&["--port", "0", "--bind", ""]);
    let (lines, code) = srv.finish();
    assert_eq!(code, Some(1));
    assert!(lines
        .iter()
        .any(|l| l.ends_with("# Configured to not listen anywhere, exiting.")));
}

#[test]
fn daemonize_writes_pidfile_and_log_in_dir_and_cleans_up_at_shutdown() {
    let dir = TempDir::new("daemon");
    let out = bin()
        .args([
            "--port",
            "0",
            "--daemonize",
            "yes",
            "--dir",
            dir.0.to_str().unwrap(),
            "--pidfile",
            "r.pid",
            "--logfile",
            "r.log",
            "--unixsocket",
            "r.sock",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    // The parent returns at once, successfully, printing nothing.
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let (pidfile, logfile, sock) = (dir.path("r.pid"), dir.path("r.log"), dir.path("r.sock"));
    let deadline = Instant::now() + Duration::from_secs(10);
    while !(sock.exists() && pidfile.exists()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid_text = std::fs::read_to_string(&pidfile).unwrap();
    assert!(pid_text.ends_with('\n'));
    let pid: i32 = pid_text.trim().parse().unwrap();
    let mut c = unix(&sock);
    assert_eq!(call(&mut c, &["PING"]), "+PONG");
    let log = std::fs::read_to_string(&logfile).unwrap();
    assert!(log.contains(&format!("{pid}:M ")), "{log}");
    assert!(log.contains("# Server initialized"), "{log}");
    // SHUTDOWN: the connection closes, the pid file and socket go, the log says so.
    let _ = call(&mut c, &["SHUTDOWN"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while (pidfile.exists() || sock.exists()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!pidfile.exists() && !sock.exists());
    // The last line follows the removals; wait for it (bounded).
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut log = String::new();
    while Instant::now() < deadline {
        log = std::fs::read_to_string(&logfile).unwrap();
        if log.contains("bye bye") {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for l in log.lines() {
        assert_redis_log_line(l);
    }
    let pos = |t: &str| log.find(t).unwrap_or_else(|| panic!("{t}: {log}"));
    assert!(pos("User requested shutdown...") < pos("Removing the pid file."));
    assert!(pos("Removing the pid file.") < pos("Removing the unix socket file."));
    assert!(pos("Removing the unix socket file.") < pos("Redis is now ready to exit, bye bye..."));
}

#[test]
fn loglevel_warning_keeps_notice_lines_out() {
    let mut srv = Server::start(&["--port", "0", "--loglevel", "warning"]);
    srv.wait_line("Server initialized");
    let mut srv2 = Server::start(&["--port", "0", "--loglevel", "notice"]);
    srv2.wait_line("Ready to accept connections tcp");
    // Notice lines after "Server initialized" would have arrived by now.
    std::thread::sleep(Duration::from_millis(300));
    while let Ok(l) = srv.log.try_recv() {
        srv.seen.push(l);
    }
    assert!(
        srv.seen.iter().all(|l| l.contains(" # ")),
        "{:#?}",
        srv.seen
    );
}

#[test]
fn sigterm_logs_and_exits_0_removing_the_pidfile() {
    let dir = TempDir::new("term");
    let pidfile = dir.path("t.pid");
    let mut srv = Server::start(&["--port", "0", "--pidfile", pidfile.to_str().unwrap()]);
    srv.wait_line("Ready to accept connections tcp");
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    assert_eq!(pid.trim(), srv.child.id().to_string());
    let srv_pid = srv.child.id();
    // SAFETY: sends a signal to the child this test started.
    unsafe { libc::kill(srv_pid as i32, libc::SIGTERM) };
    let (lines, code) = srv.finish();
    assert_eq!(code, Some(0));
    // Redis's signal handler writes its own line: `PID:signal-handler (SECONDS) msg`.
    let pid = srv_pid.to_string();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&format!("{pid}:signal-handler ("))
                && l.ends_with(") Received SIGTERM scheduling shutdown...")),
        "{lines:#?}"
    );
    assert!(!pidfile.exists());
}

#[test]
fn shutdown_on_sigterm_save_writes_the_rdb_and_sigint_nosave_does_not() {
    for (signal, setting, saved) in [
        (libc::SIGTERM, "save", true),
        (libc::SIGINT, "nosave", false),
        (libc::SIGTERM, "default", false),
    ] {
        let dir = TempDir::new("sigsave");
        let flag = if signal == libc::SIGINT {
            "--shutdown-on-sigint"
        } else {
            "--shutdown-on-sigterm"
        };
        let mut srv = Server::start(&[
            "--port",
            "0",
            "--save",
            "",
            "--dir",
            dir.0.to_str().unwrap(),
            flag,
            setting,
        ]);
        srv.wait_line("Ready to accept connections tcp");
        // SAFETY: sends a signal to the child this test started.
        unsafe { libc::kill(srv.child.id() as i32, signal) };
        let (lines, code) = srv.finish();
        assert_eq!(code, Some(0), "{setting}: {lines:#?}");
        assert_eq!(
            dir.path("dump.rdb").exists(),
            saved,
            "{setting}: {lines:#?}"
        );
        assert!(lines
            .iter()
            .any(|l| l.ends_with("# Redis is now ready to exit, bye bye...")));
    }
}

#[test]
fn protected_mode_denies_clients_from_outside_loopback_address() {
    let mut srv = Server::start(&["--port", "0", "--bind", "127.0.0.1"]);
    let port = srv.port();
    srv.wait_line("Ready to accept connections tcp");
    // 127.0.0.2 is a loopback interface address but not what Redis calls local
    // (127.0.0.1 and ::1 only), so it stands for a remote client here.
    let denied = |srv_port: u16| {
        let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        s.bind(
            &"127.0.0.2:0"
                .parse::<std::net::SocketAddr>()
                .unwrap()
                .into(),
        )
        .unwrap();
        s.connect(
            &format!("127.0.0.1:{srv_port}")
                .parse::<std::net::SocketAddr>()
                .unwrap()
                .into(),
        )
        .unwrap();
        let mut s: TcpStream = s.into();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut all = String::new();
        let _ = s.write_all(b"PING\r\n");
        let _ = s.read_to_string(&mut all);
        all
    };
    let reply = denied(port);
    assert!(
        reply.starts_with("-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user."),
        "{reply}"
    );
    assert!(
        reply.ends_with("accepting connections from the outside.\r\n")
            || reply.ends_with("from the outside.\r\n")
    );
    // From 127.0.0.1 the client is served, and turning protected mode off admits the other.
    let mut local = tcp(port);
    assert_eq!(
        call(&mut local, &["CONFIG", "SET", "protected-mode", "no"]),
        "+OK"
    );
    assert_eq!(denied(port), "+PONG\r\n");
}

#[test]
fn timeout_closes_idle_clients_but_not_subscribers() {
    let mut srv = Server::start(&["--port", "0", "--timeout", "1"]);
    let port = srv.port();
    srv.wait_line("Ready to accept connections tcp");
    let mut idle = tcp(port);
    assert_eq!(call(&mut idle, &["PING"]), "+PONG");
    let mut sub = tcp(port);
    assert_eq!(call(&mut sub, &["SUBSCRIBE", "ch"]), "*3");
    // Idle past the timeout: Redis checks every second, so within about 3 s.
    std::thread::sleep(Duration::from_millis(3500));
    let mut buf = [0u8; 64];
    idle.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let _ = idle.write_all(b"PING\r\n");
    assert_eq!(
        idle.read(&mut buf).unwrap_or(0),
        0,
        "idle client still open"
    );
    let mut pubc = tcp(port);
    assert_eq!(call(&mut pubc, &["PUBLISH", "ch", "m"]), ":1");
}

/// The image's entrypoint (`resplock --container`, see the Dockerfile) run as
/// `docker run IMAGE ARGS...` would run it: what it starts, and the container defaults it
/// adds before the given options.
fn entrypoint(args: &[&str]) -> Server {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_resplock"));
    cmd.arg("--container").args(args);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    Server {
        child,
        log: rx,
        seen: Vec::new(),
    }
}

#[test]
fn docker_entrypoint_accepts_redis_server_arguments_like_the_official_image() {
    // `redis-server ...` as testcontainers sets the command; loopback bind for the test.
    for first in [&["redis-server"][..], &[][..]] {
        let mut args: Vec<&str> = first.to_vec();
        args.extend(["--port", "0", "--save", "", "--bind", "127.0.0.1"]);
        let mut srv = entrypoint(&args);
        let port = srv.port();
        srv.wait_line("Ready to accept connections tcp");
        let mut c = tcp(port);
        // The container default (protected mode off) comes first, the given options win.
        assert_eq!(call(&mut c, &["CONFIG", "GET", "protected-mode"]), "*2");
        let mut rest = String::new();
        let mut r = BufReader::new(&mut c);
        for _ in 0..4 {
            r.read_line(&mut rest).unwrap();
        }
        assert!(rest.ends_with("$2\r\nno\r\n"), "{rest:?}");
    }
}

#[test]
fn healthcheck_exits_zero_on_pong_and_one_when_nothing_answers() {
    let server = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    let addr = server.local_addr().to_string();
    let check = |target: &str| {
        Command::new(env!("CARGO_BIN_EXE_resplock"))
            .args(["--healthcheck", target])
            .stderr(Stdio::null())
            .status()
            .unwrap()
            .code()
    };
    assert_eq!(check(&addr), Some(0));
    drop(server);
    assert_eq!(check(&addr), Some(1));
}

#[test]
fn instances_start_independent_servers_and_print_one_address_per_line() {
    let mut srv = Server::start(&[
        "--port",
        "0",
        "--instances",
        "3",
        "--enable-test-commands",
        "yes",
        "--bind",
        "127.0.0.1",
    ]);
    let mut ports = Vec::new();
    for _ in 0..3 {
        let line = srv.log.recv_timeout(Duration::from_secs(10)).unwrap();
        let port: u16 = line.rsplit(':').next().unwrap().parse().unwrap();
        ports.push(port);
    }
    ports.dedup();
    assert_eq!(ports.len(), 3);
    let mut c: Vec<TcpStream> = ports.iter().map(|&p| tcp(p)).collect();
    assert_eq!(call(&mut c[0], &["SET", "k", "v"]), "+OK");
    assert_eq!(call(&mut c[1], &["EXISTS", "k"]), ":0");
    // Each node's clock is its own: a jump on one leaves the others.
    let t0: i64 = call(&mut c[2], &["RESPLOCK.CLOCK", "GET"])[1..]
        .parse()
        .unwrap();
    call(&mut c[1], &["RESPLOCK.CLOCK", "ADVANCE", "3600000"]);
    let t1: i64 = call(&mut c[1], &["RESPLOCK.CLOCK", "GET"])[1..]
        .parse()
        .unwrap();
    let t2: i64 = call(&mut c[2], &["RESPLOCK.CLOCK", "GET"])[1..]
        .parse()
        .unwrap();
    assert!(t1 - t2 > 3_500_000 && t2 - t0 < 60_000, "{t0} {t1} {t2}");
    // SHUTDOWN stops one node, whose port refuses connections at once while the others
    // run (a lock client must not hang on a stopped node); the process ends when all have.
    let _ = call(&mut c[2], &["SHUTDOWN", "NOSAVE"]);
    let deadline = Instant::now() + Duration::from_secs(5);
    while TcpStream::connect(("127.0.0.1", ports[2])).is_ok() {
        assert!(
            Instant::now() < deadline,
            "a stopped node still accepts connections"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(call(&mut c[0], &["PING"]), "+PONG");
    for s in &mut c[..2] {
        let _ = call(s, &["SHUTDOWN", "NOSAVE"]);
    }
    assert_eq!(wait_exit(&mut srv.child), Some(0));
}

#[test]
fn instances_keep_their_own_files_and_restart_each_with_its_own_dataset() {
    let tmp = TempDir::new("instances-files");
    let dir = tmp.0.clone();
    let start = || {
        let srv = Server::start(&[
            "--port",
            "0",
            "--instances",
            "2",
            "--bind",
            "127.0.0.1",
            "--dir",
            dir.to_str().unwrap(),
            "--save",
            "",
            "--appendonly",
            "no",
        ]);
        // The addresses, among the log lines of loading the files.
        let mut ports: Vec<u16> = Vec::new();
        while ports.len() < 2 {
            let line = srv.log.recv_timeout(Duration::from_secs(10)).unwrap();
            if let Some(p) = line.strip_prefix("127.0.0.1:") {
                ports.push(p.parse().unwrap());
            }
        }
        (srv, ports)
    };
    let (mut srv, ports) = start();
    let mut c: Vec<TcpStream> = ports.iter().map(|&p| tcp(p)).collect();
    assert_eq!(call(&mut c[0], &["SET", "lock", "node-1"]), "+OK");
    assert_eq!(call(&mut c[1], &["SET", "lock", "node-2"]), "+OK");
    for (i, s) in c.iter_mut().enumerate() {
        assert_eq!(
            call_lines(s, &["CONFIG", "GET", "dbfilename"], 5),
            format!("*2 $10 dbfilename $10 dump-{}.rdb", i + 1)
        );
        let _ = call(s, &["SHUTDOWN", "SAVE"]);
    }
    assert_eq!(wait_exit(&mut srv.child), Some(0));
    assert!(dir.join("dump-1.rdb").exists() && dir.join("dump-2.rdb").exists());
    assert!(!dir.join("dump.rdb").exists());
    let (mut srv, ports) = start();
    let mut c: Vec<TcpStream> = ports.iter().map(|&p| tcp(p)).collect();
    assert_eq!(call_lines(&mut c[0], &["GET", "lock"], 2), "$6 node-1");
    assert_eq!(call_lines(&mut c[1], &["GET", "lock"], 2), "$6 node-2");
    for s in &mut c {
        let _ = call(s, &["SHUTDOWN", "NOSAVE"]);
    }
    assert_eq!(wait_exit(&mut srv.child), Some(0));
}

/// `call`, for a reply of `n` lines: them joined by spaces.
fn call_lines(stream: &mut TcpStream, args: &[&str], n: usize) -> String {
    let mut lines = vec![call(stream, args)];
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    for _ in 1..n {
        let mut l = String::new();
        reader.read_line(&mut l).unwrap();
        lines.push(l.trim_end().to_string());
    }
    lines.join(" ")
}

#[test]
fn oom_score_adj_sets_the_process_score_by_role_and_restores_it() {
    let mut srv = Server::start(&["--port", "0", "--save", ""]);
    let port = srv.port();
    srv.wait_line("Ready to accept connections tcp");
    let pid = srv.child.id();
    let score = || -> i32 {
        std::fs::read_to_string(format!("/proc/{pid}/oom_score_adj"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let base = score();
    let mut c = tcp(port);
    let set = |c: &mut TcpStream, name: &str, v: &str| call(c, &["CONFIG", "SET", name, v]);
    assert_eq!(set(&mut c, "oom-score-adj-values", "10 20 30"), "+OK");
    assert_eq!(score(), base, "off by default: the score is left alone");
    assert_eq!(set(&mut c, "oom-score-adj", "yes"), "+OK");
    assert_eq!(score(), (base + 10).clamp(-1000, 1000));
    assert_eq!(set(&mut c, "oom-score-adj-values", "15 20 30"), "+OK");
    assert_eq!(score(), (base + 15).clamp(-1000, 1000));
    // A replica takes the second class, a master again the first.
    assert_eq!(call(&mut c, &["REPLICAOF", "localhost", "1"]), "+OK");
    assert_eq!(score(), (base + 20).clamp(-1000, 1000));
    assert_eq!(call(&mut c, &["REPLICAOF", "NO", "ONE"]), "+OK");
    assert_eq!(score(), (base + 15).clamp(-1000, 1000));
    assert_eq!(set(&mut c, "oom-score-adj", "absolute"), "+OK");
    assert_eq!(score(), 15);
    assert_eq!(set(&mut c, "oom-score-adj", "no"), "+OK");
    assert_eq!(score(), base);
    let _ = call(&mut c, &["SHUTDOWN", "NOSAVE"]);
    assert_eq!(wait_exit(&mut srv.child), Some(0));
}

#[test]
fn a_background_save_child_gets_the_bgchild_oom_score() {
    let dir = TempDir::new("oomchild");
    let mut srv = Server::start(&[
        "--port",
        "0",
        "--save",
        "",
        "--dir",
        dir.0.to_str().unwrap(),
    ]);
    let port = srv.port();
    srv.wait_line("Ready to accept connections tcp");
    let pid = srv.child.id();
    let mut c = tcp(port);
    let set = |c: &mut TcpStream, name: &str, v: &str| call(c, &["CONFIG", "SET", name, v]);
    assert_eq!(set(&mut c, "oom-score-adj-values", "0 0 500"), "+OK");
    assert_eq!(set(&mut c, "oom-score-adj", "absolute"), "+OK");
    assert_eq!(call(&mut c, &["SET", "k", "v"]), "+OK");
    // One key a minute: the child lives until the test kills the save.
    assert_eq!(set(&mut c, "rdb-key-save-delay", "60000000"), "+OK");
    assert_eq!(call(&mut c, &["BGSAVE"]), "+Background saving started");
    // The child is spawned from whichever thread runs the save: each thread lists its own.
    let child_score = || -> Option<i32> {
        let kid = std::fs::read_dir(format!("/proc/{pid}/task"))
            .ok()?
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("children")).ok())
            .find_map(|k| k.split_whitespace().next().map(str::to_string))?;
        std::fs::read_to_string(format!("/proc/{kid}/oom_score_adj"))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    wait_until("the save child's score", || child_score() == Some(500));
    assert_eq!(set(&mut c, "oom-score-adj", "no"), "+OK");
    let _ = call(&mut c, &["SHUTDOWN", "NOSAVE"]);
    assert_eq!(wait_exit(&mut srv.child), Some(0));
}

/// Wait (bounded) until `cond` holds.
fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_second_sigint_during_the_final_save_exits_1_and_removes_the_temp_file() {
    let dir = TempDir::new("insist");
    let mut srv = Server::start(&[
        "--port",
        "0",
        "--save",
        "900 1",
        "--dir",
        dir.0.to_str().unwrap(),
    ]);
    srv.wait_line("Ready to accept connections tcp");
    let port = srv.port();
    let mut c = tcp(port);
    for i in 0..20 {
        assert_eq!(call(&mut c, &["SET", &i.to_string(), "v"]), "+OK");
    }
    // 100 ms a key: the final save lasts two seconds.
    assert_eq!(
        call(&mut c, &["CONFIG", "SET", "rdb-key-save-delay", "100000"]),
        "+OK"
    );
    let pid = srv.child.id();
    let temp = dir.path(&format!("temp-{pid}.rdb"));
    // SAFETY: sends a signal to the child this test started.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    wait_until("the final save's temp file", || temp.exists());
    // SAFETY: as above.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let (lines, code) = srv.finish();
    assert_eq!(code, Some(1), "{lines:#?}");
    assert!(!temp.exists());
    assert!(lines
        .iter()
        .any(|l| l.ends_with(") You insist... exiting now.")));
    assert!(!lines.iter().any(|l| l.contains("bye bye")));
}

#[test]
fn shutdown_abort_cancels_a_sigterm_the_cron_has_not_acted_on() {
    let mut srv = Server::start(&["--port", "0", "--save", "", "--enable-debug-command", "yes"]);
    srv.wait_line("Ready to accept connections tcp");
    let mut c = tcp(srv.port());
    assert_eq!(call(&mut c, &["DEBUG", "PAUSE-CRON", "1"]), "+OK");
    // SAFETY: sends a signal to the child this test started.
    unsafe { libc::kill(srv.child.id() as i32, libc::SIGTERM) };
    srv.wait_line("Received SIGTERM scheduling shutdown...");
    assert_eq!(call(&mut c, &["SHUTDOWN", "ABORT"]), "+OK");
    assert_eq!(
        call(&mut c, &["SHUTDOWN", "ABORT"]),
        "-ERR No shutdown in progress."
    );
    assert_eq!(call(&mut c, &["DEBUG", "PAUSE-CRON", "0"]), "+OK");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(call(&mut c, &["PING"]), "+PONG");
    srv.wait_line("Shutdown manually aborted.");
}

#[test]
fn a_failed_final_save_keeps_the_server_up_until_shutdown_nosave() {
    let dir = TempDir::new("failsave");
    let mut srv = Server::start(&[
        "--port",
        "0",
        "--save",
        "900 1",
        "--dir",
        dir.0.to_str().unwrap(),
    ]);
    srv.wait_line("Ready to accept connections tcp");
    let mut c = tcp(srv.port());
    assert_eq!(call(&mut c, &["SET", "k", "v"]), "+OK");
    // A directory where the file goes: the rename of the final save fails.
    std::fs::create_dir(dir.path("dump.rdb")).unwrap();
    // SAFETY: sends a signal to the child this test started.
    unsafe { libc::kill(srv.child.id() as i32, libc::SIGINT) };
    srv.wait_line("Error trying to save the DB, can't exit.");
    assert_eq!(
        call(&mut c, &["SHUTDOWN"]),
        "-ERR Errors trying to SHUTDOWN. Check logs."
    );
    assert_eq!(call(&mut c, &["PING"]), "+PONG");
    let _ = call(&mut c, &["SHUTDOWN", "NOSAVE"]);
    let (lines, code) = srv.finish();
    assert_eq!(code, Some(0));
    assert!(lines
        .iter()
        .any(|l| l.ends_with("Redis is now ready to exit, bye bye...")));
}

#[test]
fn replicaof_answers_blocked_clients_unblocked_and_closes_them() {
    let mut srv = Server::start(&["--port", "0", "--save", ""]);
    srv.wait_line("Ready to accept connections tcp");
    let port = srv.port();
    let mut blocked = tcp(port);
    blocked
        .write_all(b"*3\r\n$5\r\nBLPOP\r\n$1\r\nq\r\n$1\r\n0\r\n*1\r\n$4\r\nPING\r\n")
        .unwrap();
    let mut c = tcp(port);
    wait_until("the client to block", || {
        let head = call(&mut c, &["INFO", "clients"]);
        let n: usize = head[1..].parse().unwrap();
        let mut body = vec![0u8; n + 2];
        c.read_exact(&mut body).unwrap();
        String::from_utf8_lossy(&body).contains("blocked_clients:1")
    });
    assert_eq!(
        call(
            &mut c,
            &["REPLICAOF", "127.0.0.1", &free_port().to_string()]
        ),
        "+OK"
    );
    let mut got = Vec::new();
    let _ = blocked.read_to_end(&mut got);
    // The error, then the close: the PING behind the BLPOP is never answered.
    assert_eq!(
        String::from_utf8_lossy(&got),
        "-UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)\r\n"
    );
}

/// The pids of a process's children (from /proc: what `pgrep -P` reads).
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, so read after its ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        if rest.split_whitespace().nth(1) == Some(&pid.to_string()) {
            out.push(e.file_name().to_string_lossy().parse().unwrap());
        }
    }
    out
}

fn info_field(c: &mut TcpStream, section: &str, field: &str) -> String {
    let head = call(c, &["INFO", section]);
    let len: usize = head.trim_start_matches('$').parse().unwrap();
    let mut body = vec![0u8; len + 2];
    c.read_exact(&mut body).unwrap();
    let info = String::from_utf8(body).unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in {info}"))
        .to_string()
}

#[test]
fn bgsave_writes_through_a_child_process_that_a_kill_ends_as_a_failed_save() {
    let dir = TempDir::new("bgchild");
    let mut srv = Server::start(&[
        "--port",
        "0",
        "--save",
        "",
        "--dir",
        dir.0.to_str().unwrap(),
    ]);
    srv.wait_line("Ready to accept connections tcp");
    let mut c = tcp(srv.port());
    for i in 0..20 {
        assert_eq!(call(&mut c, &["SET", &i.to_string(), "v"]), "+OK");
    }
    assert_eq!(
        call(&mut c, &["CONFIG", "SET", "rdb-key-save-delay", "100000"]),
        "+OK"
    );
    assert_eq!(call(&mut c, &["BGSAVE"]), "+Background saving started");
    let kids = children(srv.child.id());
    assert_eq!(kids.len(), 1, "one writer child: {kids:?}");
    let temp = dir.path(&format!("temp-{}.rdb", kids[0]));
    assert!(temp.exists(), "the child's temp file is named after it");
    assert_eq!(info_field(&mut c, "stats", "total_forks"), "1");
    // SAFETY: kills the grandchild this test's server started.
    unsafe { libc::kill(kids[0] as i32, libc::SIGKILL) };
    wait_until("the save to end", || {
        info_field(&mut c, "persistence", "rdb_bgsave_in_progress") == "0"
    });
    assert_eq!(
        info_field(&mut c, "persistence", "rdb_last_bgsave_status"),
        "err"
    );
    srv.wait_line("Background saving terminated by signal 9");
    assert!(!temp.exists(), "a killed child's file is removed");
    assert!(!dir.path("dump.rdb").exists());
    // Without the delay the next one completes: the child renames its file into place.
    assert_eq!(
        call(&mut c, &["CONFIG", "SET", "rdb-key-save-delay", "0"]),
        "+OK"
    );
    assert_eq!(call(&mut c, &["BGSAVE"]), "+Background saving started");
    wait_until("the save to end", || {
        info_field(&mut c, "persistence", "rdb_bgsave_in_progress") == "0"
    });
    assert_eq!(
        info_field(&mut c, "persistence", "rdb_last_bgsave_status"),
        "ok"
    );
    assert_eq!(info_field(&mut c, "stats", "total_forks"), "2");
    assert!(dir.path("dump.rdb").exists());
    wait_until("the child to be reaped", || {
        children(srv.child.id()).is_empty()
    });
    // A save stopped by SHUTDOWN NOSAVE leaves no temp file behind.
    assert_eq!(
        call(&mut c, &["CONFIG", "SET", "rdb-key-save-delay", "100000"]),
        "+OK"
    );
    assert_eq!(call(&mut c, &["BGSAVE"]), "+Background saving started");
    let kid = children(srv.child.id())[0];
    let temp = dir.path(&format!("temp-{kid}.rdb"));
    assert!(temp.exists());
    let _ = call(&mut c, &["SHUTDOWN", "NOSAVE"]);
    let (_, code) = srv.finish();
    assert_eq!(code, Some(0));
    assert!(!temp.exists());
}

#[test]
fn bgrewriteaof_writes_its_base_through_a_child_and_the_log_reloads() {
    let dir = TempDir::new("aofchild");
    let args = [
        "--port",
        "0",
        "--save",
        "",
        "--appendonly",
        "yes",
        "--dir",
        dir.0.to_str().unwrap(),
    ];
    let mut srv = Server::start(&args);
    srv.wait_line("Ready to accept connections tcp");
    let mut c = tcp(srv.port());
    for i in 0..50 {
        assert_eq!(call(&mut c, &["SET", &format!("k{i}"), "v"]), "+OK");
    }
    let forks: u64 = info_field(&mut c, "stats", "total_forks").parse().unwrap();
    assert_eq!(
        call(&mut c, &["BGREWRITEAOF"]),
        "+Background append only file rewriting started"
    );
    wait_until("the rewrite to end", || {
        info_field(&mut c, "persistence", "aof_rewrite_in_progress") == "0"
    });
    assert_eq!(
        info_field(&mut c, "persistence", "aof_last_bgrewrite_status"),
        "ok"
    );
    let now: u64 = info_field(&mut c, "stats", "total_forks").parse().unwrap();
    assert_eq!(now, forks + 1);
    assert_eq!(call(&mut c, &["SET", "after", "v"]), "+OK");
    let _ = call(&mut c, &["SHUTDOWN", "NOSAVE"]);
    assert_eq!(srv.finish().1, Some(0));
    let mut srv = Server::start(&args);
    srv.wait_line("Ready to accept connections tcp");
    let mut c = tcp(srv.port());
    assert_eq!(call(&mut c, &["DBSIZE"]), ":51");
}

#[test]
fn the_process_title_follows_proc_title_template() {
    let mut srv = Server::start(&["--port", "0"]);
    srv.wait_line("Ready to accept connections tcp");
    let port = srv.port();
    let pid = srv.child.id();
    let cmdline = || {
        let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
        String::from_utf8_lossy(&raw)
            .trim_end_matches('\0')
            .to_string()
    };
    let exe = env!("CARGO_BIN_EXE_resplock");
    // Redis's default template: {title} {listen-addr} {server-mode}. (`--port 0` listens on
    // a free port, which the title shows.)
    assert_eq!(cmdline(), format!("{exe} 127.0.0.1:{port}"));
    let mut c = tcp(port);
    assert_eq!(
        call(
            &mut c,
            &[
                "CONFIG",
                "SET",
                "proc-title-template",
                "TEST {title} {listen-addr} {port} {tls-port} {unixsocket} {config-file}"
            ]
        ),
        "+OK"
    );
    assert_eq!(
        cmdline(),
        format!("TEST {exe} 127.0.0.1:{port} {port} 0  -")
    );
    assert!(call(
        &mut c,
        &["CONFIG", "SET", "proc-title-template", "{invalid-var}"]
    )
    .contains("template format is invalid"));
    assert_eq!(
        cmdline(),
        format!("TEST {exe} 127.0.0.1:{port} {port} 0  -")
    );
}

/// INFO's used_memory as a number.
fn used_memory(c: &mut TcpStream) -> u64 {
    info_field(c, "memory", "used_memory").parse().unwrap()
}

#[test]
fn a_replica_given_a_big_value_uses_about_the_memory_its_master_does() {
    let mut master = Server::start(&["--port", "0"]);
    master.wait_line("Ready to accept connections tcp");
    let mport = master.port();
    let mut replica = Server::start(&[
        "--port",
        "0",
        "--replicaof",
        "127.0.0.1",
        &mport.to_string(),
    ]);
    replica.wait_line("Ready to accept connections tcp");
    let mut r = tcp(replica.port());
    wait_until("the replica's link", || {
        info_field(&mut r, "replication", "master_link_status") == "up"
    });
    let mut m = tcp(mport);
    m.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let value = "v".repeat(32 << 20);
    assert_eq!(call(&mut m, &["SET", "key", &value]), "+OK");
    let offset = info_field(&mut m, "replication", "master_repl_offset");
    wait_until("the replica to catch up", || {
        info_field(&mut r, "replication", "slave_repl_offset") == offset
    });
    // The link's buffer that carried the value is not kept once it is applied (Redis's
    // unit/pendingquerybuf allows 10 MB more than the master).
    wait_until("the replica's memory to come down", || {
        used_memory(&mut r) <= used_memory(&mut m) + (10 << 20)
    });
}
