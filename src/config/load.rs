//! Startup: redis-server's `main()` argument handling and `loadServerConfig*` (config.c),
//! with their FATAL texts, for config files, `include`, stdin and `--name value` options.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::parse::{self, split_args_str, LoadState};
use super::settings::Config;
use super::table::flags;
use super::table::{lookup, Param, Scope};

/// What the binary does after parsing its command line.
///
/// ```
/// let argv: Vec<String> = ["resplock", "--version"].map(String::from).to_vec();
/// let startup = resplock::config::parse_command_line(&argv, std::io::empty(), |_| true).unwrap();
/// assert_eq!(startup.action, resplock::config::Action::Version);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Run the server with the parsed configuration.
    Serve,
    /// `-v`/`--version`: print [`version_line`] on stdout, exit 0.
    Version,
    /// `-h`/`--help`: print [`usage_text`] on stderr, exit 1 (as redis-server).
    Help,
    /// `--test-memory`: redis-server's RAM test, which resplock does not have.
    TestMemory,
    /// `--check-system`: redis-server's checks of the kernel settings fork-based
    /// persistence needs.
    CheckSystem,
}

/// A parsed command line: the configuration, what to do, and the warnings to log before
/// serving (directives accepted for compatibility that change nothing in resplock, and
/// "Reading config from stdin" as Redis logs it).
///
/// ```
/// let argv: Vec<String> = ["resplock", "--port", "7777", "--maxmemory", "10mb"].map(String::from).to_vec();
/// let startup = resplock::config::parse_command_line(&argv, std::io::empty(), |_| true).unwrap();
/// assert_eq!(startup.config.port, 7777);
/// assert!(startup.warnings.is_empty());
/// ```
#[derive(Clone, Debug)]
pub struct Startup {
    /// The configuration to serve with.
    pub config: Config,
    /// What to do.
    pub action: Action,
    /// Lines to log as warnings before serving.
    pub warnings: Vec<String>,
}

/// Why the server does not start; the process prints [`Fatal::render`] (on stdout when
/// [`Fatal::to_stdout`], as Redis logs it there) and exits with [`Fatal::exit_code`].
///
/// ```
/// let argv: Vec<String> = ["resplock", "--no-such-directive", "1"].map(String::from).to_vec();
/// let fatal = resplock::config::parse_command_line(&argv, std::io::empty(), |_| true).unwrap_err();
/// assert!(fatal.render().contains("*** FATAL CONFIG FILE ERROR (Redis 7.0.15) ***"));
/// assert_eq!(fatal.exit_code(), 1);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fatal {
    /// A refused directive: Redis's `*** FATAL CONFIG FILE ERROR ***` block, with the line
    /// number and text when the error belongs to one line.
    Config {
        /// (1-based line number, the trimmed line) in the text being read.
        line: Option<(usize, String)>,
        /// Redis's reason text.
        reason: String,
    },
    /// An error redis-server writes to its log (standard output at that point) before
    /// exiting, such as a config file it cannot open.
    Log(String),
    /// Something redis-server does that resplock refuses (Sentinel mode).
    Refused(String),
}

impl Fatal {
    /// Exit status: 1, as redis-server's `exit(1)`.
    ///
    /// ```
    /// let fatal = resplock::config::Fatal::Refused("no sentinel".into());
    /// assert_eq!(fatal.exit_code(), 1);
    /// ```
    pub fn exit_code(&self) -> i32 {
        1
    }

    /// Whether redis-server prints this on standard output (its log) rather than stderr.
    ///
    /// ```
    /// assert!(resplock::config::Fatal::Log("cannot open".into()).to_stdout());
    /// assert!(!resplock::config::Fatal::Refused("no sentinel".into()).to_stdout());
    /// ```
    pub fn to_stdout(&self) -> bool {
        matches!(self, Fatal::Log(_))
    }

    /// The exact text to print, final newline included.
    ///
    /// ```
    /// let fatal = resplock::config::Fatal::Log("Fatal error, can't open config file '/nope'".into());
    /// assert!(fatal.render().ends_with("\n"));
    /// ```
    pub fn render(&self) -> String {
        match self {
            Fatal::Config { line, reason } => {
                let mut s = format!(
                    "\n*** FATAL CONFIG FILE ERROR (Redis {}) ***\n",
                    crate::version::REDIS_VERSION
                );
                if let Some((n, text)) = line {
                    s.push_str(&format!(
                        "Reading the configuration file, at line {n}\n>>> '{text}'\n"
                    ));
                }
                s.push_str(reason);
                s.push('\n');
                s
            }
            // Logged before the server is initialised, so as a child ('C'), as Redis does.
            Fatal::Log(msg) => crate::log::format_line(
                std::process::id(),
                'C',
                std::time::SystemTime::now(),
                crate::log::Level::Warning,
                msg,
            ),
            Fatal::Refused(msg) => format!("resplock: {msg}\n"),
        }
    }
}

impl std::fmt::Display for Fatal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render())
    }
}

impl std::error::Error for Fatal {}

/// What `--version` prints: redis-server's line, with resplock's allocator and version.
///
/// ```
/// assert!(resplock::config::version_line().starts_with("Redis server v=7.0.15"));
/// ```
pub fn version_line() -> String {
    format!(
        "Redis server v={} sha=00000000:0 malloc=libc bits={} build=resplock-{}",
        crate::version::REDIS_VERSION,
        usize::BITS,
        env!("CARGO_PKG_VERSION")
    )
}

/// What `--help` prints: redis-server's usage under resplock's name, without the modes
/// resplock lacks (Sentinel, the memory test).
///
/// ```
/// assert!(resplock::config::usage_text().contains("--port"));
/// ```
pub fn usage_text() -> String {
    "Usage: ./resplock [/path/to/redis.conf] [options] [-]
       ./resplock - (read config from stdin)
       ./resplock -v or --version
       ./resplock -h or --help
       ./resplock --check-system

Examples:
       ./resplock (run the server with default conf)
       echo 'maxmemory 128mb' | ./resplock -
       ./resplock /etc/redis/6379.conf
       ./resplock --port 7777
       ./resplock --port 7777 --requirepass secret
       ./resplock /etc/myredis.conf --loglevel verbose -
       ./resplock /etc/myredis.conf --loglevel verbose
"
    .to_string()
}

/// Redis's `getAbsolutePath`: trimmed, joined to the working directory, leading `../`
/// folded into it.
fn absolute_path(name: &str) -> String {
    let rel = name.trim_matches([' ', '\r', '\n', '\t']);
    if rel.starts_with('/') {
        return rel.to_string();
    }
    let mut abs = std::env::current_dir()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    if !abs.ends_with('/') {
        abs.push('/');
    }
    let mut rel = rel;
    while let Some(r) = rel.strip_prefix("../") {
        rel = r;
        if abs.len() > 1 {
            let trimmed = &abs[..abs.len() - 1];
            abs.truncate(trimmed.rfind('/').map_or(1, |i| i + 1));
        }
    }
    abs + rel
}

/// Parse redis-server's command line (`argv[0]` is the program name) into a [`Startup`],
/// reading `stdin` when asked (`-` first or last). As redis-server's `main()`:
/// `-v`/`--version`, `-h`/`--help`, `--test-memory`, `--check-system` as first argument;
/// then an optional config file path (first argument not starting with `-`); then
/// `--name value...` options appended to the configuration as lines (a name takes the next
/// argument whatever it looks like, then every argument up to the next `--`; a bare `--save`
/// means `""`). File, stdin and options are read in that order, so later directives override
/// earlier ones (several `save` lines add up, as in Redis).
///
/// ```
/// let argv: Vec<String> = ["resplock", "--port", "7777", "--maxmemory", "10mb"].map(String::from).to_vec();
/// let startup = resplock::config::parse_command_line(&argv, std::io::empty(), |_| true).unwrap();
/// assert_eq!(startup.config.get("maxmemory").as_deref(), Some("10485760"));
/// ```
pub fn parse_command_line(
    argv: &[String],
    stdin: impl Read,
    command_exists: fn(&str) -> bool,
) -> Result<Startup, Fatal> {
    let exec = argv
        .first()
        .map_or("", |a| a.rsplit('/').next().unwrap_or(a));
    if exec.contains("redis-sentinel") || argv.iter().skip(1).any(|a| a == "--sentinel") {
        return Err(Fatal::Refused(
            "Sentinel mode (--sentinel) is not supported: resplock is a standalone server".into(),
        ));
    }
    let mut loader = Loader {
        command_exists,
        config: Config::default(),
        warnings: Vec::new(),
        state: LoadState::default(),
        module_configs: Vec::new(),
        modules: 0,
        removed_commands: HashSet::new(),
        added_commands: HashSet::new(),
    };
    let startup = |loader: Loader, action| Startup {
        config: loader.config,
        action,
        warnings: loader.warnings,
    };
    if argv.len() < 2 {
        return Ok(startup(loader, Action::Serve));
    }
    match argv[1].as_str() {
        "-v" | "--version" => return Ok(startup(loader, Action::Version)),
        "--help" | "-h" => return Ok(startup(loader, Action::Help)),
        "--test-memory" => return Ok(startup(loader, Action::TestMemory)),
        "--check-system" => return Ok(startup(loader, Action::CheckSystem)),
        _ => {}
    }
    let mut j = 1;
    let mut config_file = None;
    if !argv[1].starts_with('-') {
        config_file = Some(absolute_path(&argv[1]));
        j = 2;
    }
    let argc = argv.len();
    let mut options = String::new();
    let mut from_stdin = false;
    let mut handled_last = true;
    while j < argc {
        let a = &argv[j];
        if a == "-" && (j == 1 || j == argc - 1) {
            from_stdin = true;
        } else if handled_last && a.starts_with("--") {
            if !options.is_empty() {
                options.push('\n');
            }
            options.push_str(&a[2..]);
            options.push(' ');
            if split_args_str(a).map_or(0, |v| v.len()) == 1 {
                // A name alone: the next argument is its value whatever it looks like.
                handled_last = false;
                if a.eq_ignore_ascii_case("--save") {
                    if j == argc - 1 {
                        options.push_str("\"\"");
                    } else if argv[j + 1].starts_with("--") {
                        options.push_str("\"\"");
                        handled_last = true;
                    }
                }
            } else {
                handled_last = true;
            }
        } else {
            options.push_str(&parse::repr(a.as_bytes()));
            options.push(' ');
            handled_last = true;
        }
        j += 1;
    }

    let mut text = String::new();
    if let Some(path) = &config_file {
        text.push_str(&read_config_file(path)?);
    }
    if from_stdin {
        loader.warnings.push("Reading config from stdin".into());
        let mut buf = Vec::new();
        let mut stdin = stdin;
        // A stdin that fails to read is an empty config, as fgets() returning NULL.
        let _ = stdin.read_to_end(&mut buf);
        text.push_str(&String::from_utf8_lossy(&buf));
    }
    text.push('\n');
    text.push_str(&options);
    loader.load_string(&text)?;
    if !loader.module_configs.is_empty() {
        if loader.modules == 0 {
            return Err(Fatal::Log(
                "Module Configuration detected without loadmodule directive or no ApplyConfig call: aborting"
                    .into(),
            ));
        }
        for name in std::mem::take(&mut loader.module_configs) {
            loader
                .warnings
                .push(format!("'{name}' ignored: resplock does not load modules"));
        }
    }
    loader.config.config_file = config_file.map(PathBuf::from);
    Ok(startup(loader, Action::Serve))
}

/// The text of a config file, or of every file a pattern with `*?[` matches (none is
/// fine), as Redis's `loadServerConfig`.
fn read_config_file(path: &str) -> Result<String, Fatal> {
    let cant = |p: &str, e: &std::io::Error| {
        Fatal::Log(format!(
            "Fatal error, can't open config file '{p}': {}",
            parse::strerror(e)
        ))
    };
    let read = |p: &str| -> Result<String, Fatal> {
        let bytes = std::fs::read(p).map_err(|e| cant(p, &e))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    };
    if !path.contains(['*', '?', '[']) {
        return read(path);
    }
    let mut out = String::new();
    for p in glob_paths(path) {
        out.push_str(&read(&p)?);
    }
    Ok(out)
}

/// glob(3) over the file system, sorted: each path component may hold a pattern.
fn glob_paths(pattern: &str) -> Vec<String> {
    let absolute = pattern.starts_with('/');
    let mut found: Vec<String> = vec![if absolute { "/".into() } else { String::new() }];
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let mut next = Vec::new();
        for base in &found {
            let join = |name: &str| {
                if base.is_empty() || base.ends_with('/') {
                    format!("{base}{name}")
                } else {
                    format!("{base}/{name}")
                }
            };
            if !part.contains(['*', '?', '[']) {
                let p = join(part);
                if Path::new(&p).exists() {
                    next.push(p);
                }
                continue;
            }
            let dir = if base.is_empty() { "." } else { base.as_str() };
            let Ok(rd) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut names: Vec<String> = rd
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.') || part.starts_with('.'))
                .filter(|n| crate::glob::glob_match(part.as_bytes(), n.as_bytes(), false))
                .collect();
            names.sort();
            for n in names {
                let p = join(&n);
                if last || Path::new(&p).is_dir() {
                    next.push(p);
                }
            }
        }
        found = next;
    }
    found
}

struct Loader {
    /// Whether a command of this name exists (rename-command checks it, as Redis does); the
    /// command table is above this layer, so the caller passes the lookup in.
    command_exists: fn(&str) -> bool,
    config: Config,
    warnings: Vec<String>,
    state: LoadState,
    /// `module.name value` directives (Redis queues them for modules to claim).
    module_configs: Vec<String>,
    /// loadmodule directives seen.
    modules: usize,
    /// Command names rename-command took away or added, to check later renames as Redis.
    removed_commands: HashSet<String>,
    added_commands: HashSet<String>,
}

/// Directives Redis 7.0 still accepts and ignores (with exactly one argument).
const DEPRECATED: &[&str] = &[
    "list-max-ziplist-entries",
    "list-max-ziplist-value",
    "lua-replicate-commands",
];

impl Loader {
    fn command_exists(&self, name: &str) -> bool {
        let lower = name.to_ascii_lowercase();
        ((self.command_exists)(&lower) && !self.removed_commands.contains(&lower))
            || self.added_commands.contains(&lower)
    }

    /// Redis's `loadServerConfigFromString`.
    fn load_string(&mut self, text: &str) -> Result<(), Fatal> {
        self.state.reading = true;
        let lines: Vec<&str> = if text.is_empty() {
            Vec::new()
        } else {
            text.split('\n').collect()
        };
        for (i, raw) in lines.iter().enumerate() {
            let line = raw.trim_matches([' ', '\t', '\r', '\n']);
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fail = |reason: &str| Fatal::Config {
                line: Some((i + 1, line.to_string())),
                reason: reason.to_string(),
            };
            let Some(mut argv) = split_args_str(line) else {
                return Err(fail("Unbalanced quotes in configuration line"));
            };
            if argv.is_empty() {
                continue;
            }
            argv[0] = argv[0].to_ascii_lowercase();
            let argc = argv.len();
            if let Some((p, _)) = lookup(argv[0].as_bytes()) {
                if !p.multi_arg() && argc != 2 {
                    return Err(fail("wrong number of arguments"));
                }
                let args = if p.multi_arg() && argc == 2 && !argv[1].is_empty() {
                    // `--save "900 1"`: one argument holding several.
                    split_args_str(&argv[1]).unwrap_or_default()
                } else {
                    argv[1..].to_vec()
                };
                self.config
                    .set_param(p, &args, Some(&mut self.state))
                    .map_err(|e| fail(&e))?;
                self.note_without_effect(p, line);
                continue;
            }
            if argc == 2 && DEPRECATED.contains(&argv[0].as_str()) {
                continue;
            }
            match argv[0].as_str() {
                "include" if argc == 2 => {
                    let path = self.resolve(&argv[1]);
                    let text = read_config_file(&path)?;
                    self.load_string(&text)?;
                }
                "rename-command" if argc == 3 => {
                    if !self.command_exists(&argv[1]) {
                        return Err(fail("No such command in rename-command"));
                    }
                    let from = argv[1].to_ascii_lowercase();
                    self.added_commands.remove(&from);
                    self.removed_commands.insert(from.clone());
                    if !argv[2].is_empty() {
                        if self.command_exists(&argv[2]) {
                            return Err(fail("Target command name already exists"));
                        }
                        self.added_commands.insert(argv[2].to_ascii_lowercase());
                    }
                    self.config.rename_commands.push((from, argv[2].clone()));
                }
                "user" if argc >= 2 => {
                    // ACLAppendUserForLoading: a user is defined once (its rules are checked
                    // when the users are made, at start).
                    if self.config.users.iter().any(|u| u[0] == argv[1]) {
                        return Err(fail(&format!(
                            "Error in user declaration '{}': Duplicate user found. A user can only be defined once in config files",
                            argv[1]
                        )));
                    }
                    self.config.users.push(argv[1..].to_vec());
                }
                "loadmodule" if argc >= 2 => {
                    self.modules += 1;
                    self.warnings.push(format!(
                        "'loadmodule {}' ignored: resplock does not load modules",
                        argv[1]
                    ));
                }
                name if name.contains('.') => {
                    if argc < 2 {
                        return Err(fail("Module config specified without value"));
                    }
                    self.module_configs.push(argv[0].clone());
                }
                "sentinel" => {
                    if argc != 1 {
                        return Err(fail("sentinel directive while not in sentinel mode"));
                    }
                }
                _ => return Err(fail("Bad directive or wrong number of arguments")),
            }
        }
        let done = |reason: String| Fatal::Config { line: None, reason };
        if !self.config.logfile.is_empty() {
            let path = self.resolve(&self.config.logfile.clone());
            std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(path)
                .map_err(|e| done(format!("Can't open the log file: {}", parse::strerror(&e))))?;
        }
        let cluster = lookup(b"cluster-enabled").expect("row").0;
        let replicaof = lookup(b"replicaof").expect("row").0;
        if self.config.formatted(cluster) == "yes" && !self.config.formatted(replicaof).is_empty() {
            return Err(done(
                "replicaof directive not allowed in cluster mode".into(),
            ));
        }
        self.state.reading = false;
        Ok(())
    }

    /// A relative path as Redis sees it after `dir` changed its working directory.
    fn resolve(&self, path: &str) -> String {
        match &self.config.dir {
            Some(d) if !path.starts_with('/') => d.join(path).display().to_string(),
            _ => path.to_string(),
        }
    }

    /// One warning for a directive resplock accepts but cannot honour, when it asks for
    /// something else than resplock's default (`--save ""` and `--appendonly no` say
    /// nothing). Secrets stay out of the log.
    fn note_without_effect(&mut self, p: &Param, line: &str) {
        let why = match p.scope {
            Scope::Cluster => {
                "a single resplock server has no cluster mode (resplock --cluster N has)"
            }
            Scope::Pending => "not implemented in resplock yet",
            Scope::Honoured | Scope::Stored | Scope::Persistence | Scope::Replication => return,
        };
        if self.config.formatted(p) == parse::format_value(p, &parse::default_value(p)) {
            return;
        }
        let shown = if p.has(flags::SENSITIVE) {
            p.name.to_string()
        } else {
            line.to_string()
        };
        self.warnings.push(format!("'{shown}' ignored: {why}"));
    }
}
