//! `resplock`: the command line over the library. Parses redis-server's command line into a
//! Config and runs the server process as redis-server would.

use resplock::config::{self, Action};

/// mimalloc instead of glibc malloc: the server allocates small short-lived buffers per
/// request and small long-lived ones per key; glibc's chunk coalescing showed up as about an
/// eighth of the CPU time of a script-heavy load, and its per-chunk headers cost memory per lock.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
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
    std::process::exit(resplock::server::process::run(startup, &argv));
}
