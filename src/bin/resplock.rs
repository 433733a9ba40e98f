//! `resplock`: the command line over the library. Parses redis-server's command line into a
//! Config and serves.

use resplock::config::{self, Action};

/// mimalloc instead of glibc malloc: the server allocates small short-lived buffers per
/// request and small long-lived ones per key; glibc's chunk coalescing showed up as about an
/// eighth of the CPU time of a script-heavy load, and its per-chunk headers cost memory per lock.
/// Wrapped in the counter that gives maxmemory and INFO Redis's used_memory.
#[global_allocator]
static GLOBAL: resplock::alloc::Counting<mimalloc::MiMalloc> =
    resplock::alloc::Counting(mimalloc::MiMalloc);

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
    let argv: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
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
    let config = startup.config;
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
        .thread_stack_size(resplock::WORKER_STACK_BYTES)
        .enable_all()
        .build()
        .expect("tokio runtime");
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
            let term = async {
                #[cfg(unix)]
                {
                    let mut s =
                        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
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
            state.shutdown.cancel();
        });
        server.wait().await;
    });
}
