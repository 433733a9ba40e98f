//! `resplock`: the command line over the library. Parses flags into a Config and serves.

use clap::Parser;
use resplock::Config;

/// mimalloc instead of glibc malloc: the server allocates small short-lived buffers per
/// request and small long-lived ones per key; glibc's chunk coalescing showed up as about an
/// eighth of the CPU time of a script-heavy load, and its per-chunk headers cost memory per lock.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser, Debug)]
#[command(
    name = "resplock",
    version,
    about = "A Redis-compatible lock server (RESP2/RESP3)"
)]
struct Args {
    /// Address to listen on (loopback by default).
    #[arg(long, default_value = "127.0.0.1")]
    bind: String,
    /// TCP port; 0 picks a free one.
    #[arg(long, default_value_t = 6379)]
    port: u16,
    /// Require AUTH with this password.
    #[arg(long)]
    requirepass: Option<String>,
    /// Number of databases (SELECT 0..N-1).
    #[arg(long, default_value_t = 16)]
    databases: usize,
    /// Most simultaneous clients.
    #[arg(long, default_value_t = 10000)]
    maxclients: usize,
    /// Milliseconds a script runs before other clients get -BUSY (alias --lua-time-limit).
    #[arg(
        long = "busy-reply-threshold",
        alias = "lua-time-limit",
        default_value_t = 5000
    )]
    busy_reply_threshold: u64,
    /// Keyspace notification classes, as redis-server's notify-keyspace-events.
    #[arg(long = "notify-keyspace-events", default_value = "")]
    notify_keyspace_events: String,
    /// redis-server persistence option: accepted and ignored (nothing is kept on disk).
    #[arg(long)]
    save: Option<String>,
    /// redis-server persistence option: accepted and ignored (nothing is kept on disk).
    #[arg(long)]
    appendonly: Option<String>,
}

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
    let args = Args::parse();
    if let Some(s) = &args.save {
        if !s.is_empty() {
            tracing::warn!("--save {s:?} ignored: resplock keeps nothing on disk");
        }
    }
    if let Some(a) = &args.appendonly {
        if a != "no" {
            tracing::warn!("--appendonly {a} ignored: resplock keeps nothing on disk");
        }
    }
    let config = Config {
        bind: args.bind,
        port: args.port,
        requirepass: args.requirepass,
        databases: args.databases.max(1),
        maxclients: args.maxclients.max(1),
        busy_reply_threshold_ms: args.busy_reply_threshold,
        notify_keyspace_events: args.notify_keyspace_events,
        save: args.save.unwrap_or_default(),
        appendonly: args.appendonly.unwrap_or_else(|| "no".into()),
        ..Config::default()
    };
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
