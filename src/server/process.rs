//! The server process as redis-server's `main()` runs it once the command line is parsed:
//! working directory, daemon mode, the log and its startup lines, the runtime, the pid file,
//! signals, and the lines at exit. Harnesses wait for these lines (`Server initialized`,
//! `Ready to accept connections`), so their text and order are Redis's.

use super::daemon;
use crate::cmd::runtime::shutdown::Signal;
use crate::config::{Config, Startup};
use crate::log::{self, Level};
use std::path::PathBuf;

/// Run the server described by `startup` until it shuts down; returns the exit status.
/// `argv` is the command line (its length decides Redis's "no config file" warning).
///
/// ```no_run
/// // `no_run`: this serves until SHUTDOWN or a signal, as the `resplock` binary does.
/// let argv: Vec<String> = vec!["resplock".into(), "--port".into(), "6390".into()];
/// let startup = resplock::config::parse_command_line(&argv, std::io::empty(), |name| {
///     resplock::command_exists(name)
/// })
/// .expect("a valid command line");
/// std::process::exit(resplock::server::process::run(startup, &argv));
/// ```
pub fn run(startup: Startup, argv: &[String]) -> i32 {
    let config = startup.config;
    if let Some(dir) = &config.dir {
        if let Err(e) = std::env::set_current_dir(dir) {
            eprintln!("Can't chdir to '{}': {e}", dir.display());
            return 1;
        }
    }
    if config.daemonize {
        daemon::daemonize();
    }
    let logfile = Some(PathBuf::from(&config.logfile)).filter(|p| !p.as_os_str().is_empty());
    log::init(Level::from_u8(config.loglevel as u8), logfile);
    let early = |msg: &str| log::log_as('C', Level::Warning, msg);
    early("oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo");
    early(&format!(
        "Redis version={}, bits={}, commit=00000000, modified=0, pid={}, just started",
        crate::version::REDIS_VERSION,
        usize::BITS,
        std::process::id()
    ));
    early(&format!(
        "resplock {} (Redis {} compatible)",
        env!("CARGO_PKG_VERSION"),
        crate::version::REDIS_VERSION
    ));
    if argv.len() <= 1 {
        early(&format!(
            "Warning: no config file specified, using the default config. In order to specify a config file use {} /path/to/redis.conf",
            argv.first().map_or("resplock", |a| a.as_str())
        ));
    } else {
        early("Configuration loaded");
    }
    for w in &startup.warnings {
        early(w);
    }
    let rt = match runtime(&config) {
        Ok(rt) => rt,
        Err(e) => {
            log::warning(&format!(
                "Failed creating the event loop. Error message: '{e}'"
            ));
            return 1;
        }
    };
    rt.block_on(serve(config))
}

/// `--instances N`: N independent servers (own keyspace, clock and faults) in this process,
/// on ports P..P+N-1 (`--port 0`: N free ports). Prints one address per line once all
/// listen, so a Redlock test reads its N nodes from standard output. Stops on SIGINT/SIGTERM
/// (each instance also stops alone on SHUTDOWN; the process exits when all have).
///
/// ```no_run
/// // `no_run`: this serves three instances until a signal, as `resplock --instances 3` does.
/// let argv: Vec<String> = vec!["resplock".into(), "--port".into(), "0".into()];
/// let startup = resplock::config::parse_command_line(&argv, std::io::empty(), |name| {
///     resplock::command_exists(name)
/// })
/// .expect("a valid command line");
/// std::process::exit(resplock::server::process::run_many(startup, 3));
/// ```
pub fn run_many(startup: Startup, n: usize) -> i32 {
    let config = startup.config;
    log::init(Level::from_u8(config.loglevel as u8), None);
    let rt = match runtime(&config) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("resplock: {e}");
            return 1;
        }
    };
    rt.block_on(async move {
        let signals = shutdown_signals();
        let servers = match super::start_many(config, n).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("resplock: cannot listen: {e}");
                return 1;
            }
        };
        {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            for s in &servers {
                let _ = writeln!(out, "{}", s.local_addr());
            }
            let _ = out.flush();
        }
        let states: Vec<_> = servers.iter().map(|s| s.state().clone()).collect();
        tokio::spawn(async move {
            let mut signals = signals;
            log::warning(signal_line(wait_signal(&mut signals).await));
            for s in states {
                s.shutdown.cancel();
            }
        });
        for s in servers {
            s.wait().await;
        }
        0
    })
}

/// `--cluster N --replicas R`: a Redis Cluster of N masters with R replicas each in this
/// process ([`super::start_cluster`]), on ports P.. (`--port 0`: free ports). Prints one
/// address per line once every node listens (masters first, then replicas, in the order
/// redis-cli assigns them), so a test reads its seeds from standard output. Stops on
/// SIGINT/SIGTERM.
///
/// ```no_run
/// // `no_run`: this serves six nodes until a signal, as `resplock --cluster 3 --replicas 1` does.
/// let argv: Vec<String> = vec!["resplock".into(), "--port".into(), "0".into()];
/// let startup = resplock::config::parse_command_line(&argv, std::io::empty(), |name| {
///     resplock::command_exists(name)
/// })
/// .expect("a valid command line");
/// std::process::exit(resplock::server::process::run_cluster(startup, 3, 1));
/// ```
pub fn run_cluster(startup: Startup, masters: usize, replicas: usize) -> i32 {
    let config = startup.config;
    log::init(Level::from_u8(config.loglevel as u8), None);
    let rt = match runtime(&config) {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("resplock: {e}");
            return 1;
        }
    };
    rt.block_on(async move {
        let signals = shutdown_signals();
        let cluster = match super::start_cluster(config, masters, replicas).await {
            Ok(c) => c,
            Err(e) => {
                eprintln!("resplock: cannot start the cluster: {e}");
                return 1;
            }
        };
        {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            for a in cluster.addrs() {
                let _ = writeln!(out, "{a}");
            }
            let _ = out.flush();
        }
        let states = cluster.states();
        tokio::spawn(async move {
            let mut signals = signals;
            log::warning(signal_line(wait_signal(&mut signals).await));
            for s in states {
                s.shutdown.cancel();
            }
        });
        cluster.wait().await;
        0
    })
}

/// The runtime: one worker per CPU this process may run on (its affinity mask and cgroup
/// quota count). One worker is enough to answer BUSY, SCRIPT KILL and SHUTDOWN NOSAVE while
/// a script runs: a script past its grace hands the worker's other tasks to a fresh thread
/// (block_in_place). A second worker on a single CPU only adds wake-ups between the two:
/// pinned to one CPU, two workers cost about 1 µs more per GET than one (0.30 against 0.13
/// context switches per request). `RESPLOCK_WORKERS=N` overrides. `io-threads` is accepted
/// and does not change it.
fn runtime(_config: &Config) -> std::io::Result<tokio::runtime::Runtime> {
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let workers = std::env::var("RESPLOCK_WORKERS")
        .ok()
        .and_then(|w| w.parse().ok())
        .filter(|&w: &usize| w > 0)
        .unwrap_or(workers);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        // The Lua bridges recurse (reply conversion, cmsgpack): 8 MB as a main thread has.
        .thread_stack_size(crate::cmd::WORKER_STACK_BYTES)
        .enable_all()
        .build()
}

async fn serve(config: Config) -> i32 {
    // Signal handlers first: a SIGTERM right after the ready line must find them installed.
    let signals = shutdown_signals();
    log::notice("monotonic clock: POSIX clock_gettime");
    let pidfile = daemon::pidfile_for(config.pidfile.as_deref(), config.daemonize);
    let configured_port = config.port;
    let always_show_logo = config.get("always-show-logo").as_deref() == Some("yes");
    let server = match super::start_with_pidfile(config, pidfile.clone()).await {
        Ok(s) => s,
        Err(e) => {
            log::warning(&e.to_string());
            return 1;
        }
    };
    if let Some(p) = &pidfile {
        daemon::write_pidfile(p);
    }
    let tcp = *server.state().local_addr.read();
    let port = tcp.map_or(configured_port, |a| a.port());
    // Redis's redisAsciiArt: the logo (which harnesses read the PID from) when asked for or
    // on a terminal, else one line.
    let show_logo = always_show_logo
        || (log::to_stdout() && std::io::IsTerminal::is_terminal(&std::io::stdout()));
    if show_logo {
        log::raw(Level::Notice, &logo(port));
    } else {
        log::notice(&format!("Running mode=standalone, port={port}."));
    }
    log::warning("Server initialized");
    crate::cmd::runtime::proc_title::refresh(server.state());
    if server.load_data().await.is_err() {
        server.wait().await;
        return 1;
    }
    if tcp.is_some() {
        log::notice("Ready to accept connections tcp");
    }
    if let Some(path) = server.unix_socket() {
        log::notice("Ready to accept connections unix");
        // Redis 7.0's own line for the socket; log waiters match its lower-case text.
        log::notice(&format!(
            "The server is now ready to accept connections at {}",
            path.display()
        ));
    }
    let state = server.state().clone();
    tokio::spawn(async move {
        let mut signals = signals;
        loop {
            // sigShutdownHandler: the cron starts the shutdown (prepareForShutdown with
            // shutdown-on-sigint/-sigterm's flags); a second SIGINT exits at once.
            let sig = wait_signal(&mut signals).await;
            crate::cmd::runtime::shutdown::signal(&state, sig);
        }
    });
    server.wait().await;
    log::warning("Redis is now ready to exit, bye bye...");
    0
}

type Signals = Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>;

/// Install the SIGINT and SIGTERM handlers.
fn shutdown_signals() -> Signals {
    use tokio::signal::unix::{signal, SignalKind};
    match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) {
        (Ok(int), Ok(term)) => Some((int, term)),
        _ => None,
    }
}

/// Wait for SIGINT or SIGTERM.
async fn wait_signal(signals: &mut Signals) -> Signal {
    let Some((int, term)) = signals else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = int.recv() => Signal::Int,
        _ = term.recv() => Signal::Term,
    }
}

/// The log line Redis writes for a signal that stops every instance of the process.
fn signal_line(sig: Signal) -> &'static str {
    match sig {
        Signal::Int => "Received SIGINT scheduling shutdown...",
        Signal::Term => "Received SIGTERM scheduling shutdown...",
    }
}

/// The startup banner, with the fields of Redis's (version, mode, port, PID).
fn logo(port: u16) -> String {
    format!(
        "   ______________________
  |                      |      Redis {} (00000000/0) {} bit
  |   resplock {:<10}|      Running in standalone mode
  |   a Redis-compatible |      Port: {port}
  |   lock server        |      PID: {}
  |______________________|

",
        crate::version::REDIS_VERSION,
        usize::BITS,
        env!("CARGO_PKG_VERSION"),
        std::process::id()
    )
}
