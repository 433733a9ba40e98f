//! `resplock`: the command line over the library. Parses redis-server's command line into a
//! Config and serves.

use resplock::config::{self, Action};

/// mimalloc instead of glibc malloc: the server allocates small short-lived buffers per
/// request and small long-lived ones per key; glibc's chunk coalescing showed up as about an
/// eighth of the CPU time of a script-heavy load, and its per-chunk headers cost memory per lock.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("RESPLOCK_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        // Colour only on a terminal: CI logs and files get plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    // redis-server's command line, parsed as redis-server does (config file, stdin, --options).
    let mut argv: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    // resplock's own options first; the rest is redis-server's command line.
    let own = match config::take_own_args(&mut argv) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("resplock: {e}");
            std::process::exit(1);
        }
    };
    if let Some(addr) = &own.healthcheck {
        std::process::exit(healthcheck(addr));
    }
    let startup = match config::parse_command_line(
        &argv,
        std::io::stdin().lock(),
        resplock::command_exists,
    ) {
        Ok(s) => s,
        Err(fatal) => {
            if fatal.to_stdout() {
                print!("{}", fatal.render());
            } else {
                eprint!("{}", fatal.render());
            }
            std::process::exit(fatal.exit_code());
        }
    };
    match startup.action {
        Action::Serve => {}
        Action::Version => {
            println!("{}", config::version_line());
            std::process::exit(0);
        }
        Action::Help => {
            eprint!("{}", config::usage_text());
            std::process::exit(1);
        }
        Action::TestMemory => {
            eprintln!(
                "resplock: --test-memory is not supported: resplock has no memory tester (try memtester, or redis-server --test-memory)"
            );
            std::process::exit(1);
        }
        Action::CheckSystem => {
            println!("resplock: nothing to check: the system checks of redis-server concern fork-based persistence, which resplock does not have");
            std::process::exit(0);
        }
    }
    for w in &startup.warnings {
        tracing::warn!("{w}");
    }
    let mut config = startup.config;
    config.enable_test_commands = own.enable_test_commands;
    // At least two workers even on one CPU: a running script occupies one, and another must
    // keep answering the other clients (BUSY, SCRIPT KILL, SHUTDOWN NOSAVE).
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .max(2);
    let workers = std::env::var("RESPLOCK_WORKERS")
        .ok()
        .and_then(|w| w.parse().ok())
        .unwrap_or(workers);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .expect("tokio runtime");
    if let Some(n) = own.instances {
        rt.block_on(serve_many(config, n));
        return;
    }
    rt.block_on(async move {
        let server = match resplock::start(config).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("resplock: cannot listen: {e}");
                std::process::exit(1);
            }
        };
        println!(
            "resplock {} ready to accept connections on {}",
            env!("CARGO_PKG_VERSION"),
            server.local_addr()
        );
        let state = server.state().clone();
        tokio::spawn(async move {
            stop_signal().await;
            state.shutdown.cancel();
        });
        server.wait().await;
    });
}

/// SIGINT or SIGTERM.
async fn stop_signal() {
    let term = async {
        #[cfg(unix)]
        {
            let mut s = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .expect("signal handler");
            s.recv().await;
        }
        #[cfg(not(unix))]
        std::future::pending::<()>().await;
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
}

/// `--instances N`: N independent servers (own keyspace, clock and faults) in this process,
/// on ports P..P+N-1 (`--port 0`: N free ports). Prints one address per line once all
/// listen, so a Redlock test reads its N nodes from standard output. Stops on SIGINT/SIGTERM
/// (each instance also stops alone on SHUTDOWN; the process exits when all have).
async fn serve_many(config: resplock::Config, n: usize) {
    let servers = match resplock::start_many(config, n).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("resplock: cannot listen: {e}");
            std::process::exit(1);
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
        stop_signal().await;
        for s in states {
            s.shutdown.cancel();
        }
    });
    for s in servers {
        s.wait().await;
    }
}

/// `--healthcheck [host:]port`: PING the server; 0 if it answers (PONG, or NOAUTH from a
/// server with a password: it is up), 1 otherwise. Needs no shell and no redis-cli, so a
/// container image can be a static binary alone.
fn healthcheck(addr: &str) -> i32 {
    use std::io::{Read, Write};
    use std::net::ToSocketAddrs;
    let target = if addr.contains(':') {
        addr.to_string()
    } else {
        format!("127.0.0.1:{addr}")
    };
    let timeout = std::time::Duration::from_secs(3);
    let check = || -> std::io::Result<bool> {
        let sa = target
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| std::io::Error::other("no address"))?;
        let mut s = std::net::TcpStream::connect_timeout(&sa, timeout)?;
        s.set_read_timeout(Some(timeout))?;
        s.write_all(b"*1\r\n$4\r\nPING\r\n")?;
        let mut buf = [0u8; 64];
        let n = s.read(&mut buf)?;
        Ok(buf[..n].starts_with(b"+PONG") || buf[..n].starts_with(b"-NOAUTH"))
    };
    match check() {
        Ok(true) => 0,
        Ok(false) => {
            eprintln!("resplock: {target} did not answer PONG");
            1
        }
        Err(e) => {
            eprintln!("resplock: {target}: {e}");
            1
        }
    }
}
