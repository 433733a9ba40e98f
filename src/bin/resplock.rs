//! `resplock`: the command line over the library. Parses redis-server's command line into a
//! Config and runs the server process as redis-server would.

use resplock::config::{self, Action};

/// mimalloc instead of glibc malloc: the server allocates small short-lived buffers per
/// request and small long-lived ones per key; glibc's chunk coalescing showed up as about an
/// eighth of the CPU time of a script-heavy load, and its per-chunk headers cost memory per lock.
/// Wrapped in the counter that gives maxmemory and INFO Redis's used_memory.
#[global_allocator]
static GLOBAL: resplock::alloc::Counting<mimalloc::MiMalloc> =
    resplock::alloc::Counting(mimalloc::MiMalloc);

fn main() {
    // redis-server's command line, parsed as redis-server does (config file, stdin, --options).
    let mut argv: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    // A background job's writer child (BGSAVE, BGREWRITEAOF), started by a server below.
    if let Some(code) = resplock::run_background_writer(&argv) {
        std::process::exit(code);
    }
    resplock::enable_background_writers();
    // `resplock check HISTORY...`: the lock-history checker, not a server. redis-server would
    // read a config file named `check`; nobody names one that.
    if argv.get(1).is_some_and(|a| a == "check") {
        let code = resplock::history::cli::run(
            &argv[2..],
            &mut std::io::stdout().lock(),
            &mut std::io::stderr().lock(),
        );
        std::process::exit(code);
    }
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
    let mut startup = startup;
    if startup.config.get("disable-thp").as_deref() == Some("yes") {
        disable_thp();
    }
    startup.config.enable_test_commands = own.enable_test_commands;
    if own.cluster.is_none() && own.instances.is_none() {
        // One server: its title is the process's.
        resplock::enable_process_title();
    }
    let code = match (own.cluster, own.instances) {
        (Some(n), _) => resplock::server::process::run_cluster(startup, n, own.replicas),
        (None, Some(n)) => resplock::server::process::run_many(startup, n),
        (None, None) => resplock::server::process::run(startup, &argv),
    };
    std::process::exit(code);
}

/// disable-thp: no transparent huge pages for this process, as Redis asks of the kernel.
/// mimalloc advises huge pages for the arenas it commits eagerly, which a kernel in `madvise`
/// mode grants, so every large value's allocation was resident to its size class's last
/// byte, 2 MB at a time: 1,000 values of 100 KB cost 123 MB of RSS instead of 105 MB.
fn disable_thp() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes plain integers and only sets a flag of this process.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
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
