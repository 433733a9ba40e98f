//! The append-only log at the server level, as redis-server 7.0 runs it: loaded at start
//! (loadAppendOnlyFiles, with the upgrade of an old single-file AOF), opened for appending
//! (aofOpenIfNeededOnServerStart), rewritten in the background (BGREWRITEAOF: a new
//! incremental file from the moment of the snapshot, a new base file written from the
//! snapshot, then the manifest switched and the old files removed), turned on and off at
//! run time, and rewritten automatically as it grows. The files and their format are
//! `crate::aof`'s.

use crate::aof::append::{Appender, Fsync};
use crate::aof::load::{self as aofload, CommandError, Status, Target};
use crate::aof::manifest::{write_manifest, Manifest};
use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::persist::load;
use crate::cmd::runtime::persist::registry::{Job, JobKind};
use crate::cmd::runtime::persist::save::{self, StartError};
use crate::cmd::runtime::persist::settings;
use crate::cmd::runtime::state::{Ctx, ServerState};
use crate::rdb::file::Event;
use crate::rdb::snapshot::{self, Records, Sink};
use crate::rdb::LoadError;
use bytes::Bytes;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// aof_state: off.
pub const OFF: u8 = 0;
/// aof_state: on.
pub const ON: u8 = 1;
/// aof_state: turned on at run time, waiting for the first rewrite to finish.
pub const WAIT_REWRITE: u8 = 2;

fn manifest_name(c: &crate::config::Config) -> String {
    format!("{}.manifest", settings::appendfilename(c))
}

/// Runs the log's commands as Redis's AOF client does: transactions queued until EXEC, the
/// database it selected kept, replies dropped. The server lock is held in stretches of 1024
/// commands, so what may run while loading (INFO, SHUTDOWN) still gets to.
struct Loader<'a> {
    state: &'a ServerState,
    client: Client,
    queued: Option<Vec<Vec<Bytes>>>,
    guard: Option<crate::cmd::runtime::lock::Held<'a>>,
    /// Take the server lock (at start); false when the caller holds it (DEBUG LOADAOF).
    take_lock: bool,
    ran: u64,
}

impl Loader<'_> {
    fn run(&mut self, args: &[Bytes]) -> Result<(), CommandError> {
        let state = self.state;
        let Some(row) = state.commands.lookup(&args[0]) else {
            return Err(CommandError::Unknown);
        };
        let (cmd, _parent) = match state.commands.resolve(args) {
            Ok(r) => r,
            Err(_) if row.subcommands.is_empty() => {
                return Err(CommandError::Fatal(format!(
                    "Wrong number of arguments for '{}' reading the append only file",
                    String::from_utf8_lossy(&args[0])
                )))
            }
            Err(_) => return Err(CommandError::Unknown),
        };
        if matches!(cmd.runs, crate::cmd::runtime::table::Runs::Script(_)) {
            crate::cmd::runtime::script_runner::run_script_row(state, self.client.db, cmd, args);
            return Ok(());
        }
        let mut ctx = Ctx {
            state,
            client: &mut self.client,
            now: state.clock.now_ms(),
            in_script: false,
            in_exec: false,
        };
        crate::cmd::runtime::call::call(&mut ctx, cmd, args);
        Ok(())
    }
}

impl Target for Loader<'_> {
    fn rdb_event(&mut self, ev: Event) -> Result<(), LoadError> {
        load::apply(self.state, ev, false)
    }

    fn command(&mut self, args: Vec<Bytes>) -> Result<(), CommandError> {
        self.ran += 1;
        if self.take_lock {
            if self.ran.is_multiple_of(1024) {
                self.guard = None;
            }
            if self.guard.is_none() {
                self.guard = Some(self.state.lock.lock_blocking());
            }
        }
        let name = args[0].to_ascii_lowercase();
        match (name.as_slice(), self.queued.is_some()) {
            (b"multi", false) => {
                self.queued = Some(Vec::new());
                Ok(())
            }
            (b"exec", true) => {
                for q in self.queued.take().unwrap_or_default() {
                    self.run(&q)?;
                }
                Ok(())
            }
            (b"discard", true) => {
                self.queued = None;
                Ok(())
            }
            (_, true) => {
                if self.state.commands.lookup(&args[0]).is_none() {
                    return Err(CommandError::Unknown);
                }
                if let Some(q) = self.queued.as_mut() {
                    q.push(args);
                }
                Ok(())
            }
            _ => self.run(&args),
        }
    }
}

/// Read the manifest of the AOF directory; an empty one if there is no directory or no
/// manifest (aofLoadManifestFromDisk). Err: the fatal lines were logged.
fn read_manifest(state: &ServerState) -> Result<Manifest, ()> {
    let c = state.config.read().clone();
    let path = settings::aof_dir(&c).join(manifest_name(&c));
    match std::fs::read(&path) {
        Ok(text) => Manifest::parse(&text).map_err(|e| {
            for l in e.log_lines() {
                crate::log::warning(&l);
            }
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Manifest::default()),
        Err(e) => {
            crate::log::warning(&format!(
                "Fatal error: can't open the AOF manifest file {} for reading: {}",
                path.display(),
                crate::config::strerror(&e)
            ));
            Err(())
        }
    }
}

/// aofUpgradePrepare: an old-style single AOF (`appendfilename` in `dir`) becomes the base
/// of a new AOF directory.
fn upgrade_old_style(state: &ServerState, m: &mut Manifest) -> Result<(), ()> {
    let c = state.config.read().clone();
    let name = settings::appendfilename(&c);
    let old = settings::dir(&c).join(&name);
    let aofdir = settings::aof_dir(&c);
    if !old.exists() {
        return Ok(());
    }
    let upgrade = !aofdir.is_dir()
        || (m.base.is_none() && m.incr.is_empty())
        || (m.incr.is_empty()
            && m.base.as_ref().is_some_and(|b| b.name == name)
            && !aofdir.join(&name).exists());
    if !upgrade {
        return Ok(());
    }
    if let Err(e) = std::fs::create_dir_all(&aofdir) {
        crate::log::warning(&format!(
            "Can't open or create append-only dir {}: {}",
            aofdir.display(),
            crate::config::strerror(&e)
        ));
        return Err(());
    }
    *m = Manifest::default();
    m.base = Some(crate::aof::manifest::AofFile {
        name: name.clone(),
        seq: 1,
        kind: crate::aof::manifest::FileType::Base,
    });
    m.base_seq = 1;
    write_manifest(&aofdir, &manifest_name(&c), &m.to_text()).map_err(|_| ())?;
    if let Err(e) = std::fs::rename(&old, aofdir.join(&name)) {
        crate::log::warning(&format!(
            "Error trying to move the old AOF file {name} into dir {}: {}",
            aofdir.display(),
            crate::config::strerror(&e)
        ));
        return Err(());
    }
    crate::log::notice(&format!(
        "Successfully migrated an old-style AOF file ({name}) into the AOF directory ({}).",
        aofdir.display()
    ));
    Ok(())
}

/// Load `manifest`'s files into the (empty) dataset, logging as loadAppendOnlyFiles.
fn load_files(state: &ServerState, manifest: &Manifest) -> Status {
    load_files_with(state, manifest, true)
}

/// [`load_files`] for a caller that holds the server lock.
fn load_files_locked(state: &ServerState, manifest: &Manifest) -> Status {
    load_files_with(state, manifest, false)
}

fn load_files_with(state: &ServerState, manifest: &Manifest, take_lock: bool) -> Status {
    let c = state.config.read().clone();
    let dir = settings::aof_dir(&c);
    let total: u64 = manifest
        .load_order()
        .filter_map(|f| std::fs::metadata(dir.join(&f.name)).ok())
        .map(|m| m.len())
        .sum();
    let opts = aofload::Options {
        load_truncated: settings::aof_load_truncated(&c),
        rdb: load::options(state, false, true),
    };
    let was_active = state.propagation.is_active();
    // The log's own commands must not be appended to it again while it loads.
    state.propagation.set_active(false);
    load::start_loading(state, total);
    let mut target = Loader {
        state,
        client: Client::detached(0, 0, 2),
        queued: None,
        guard: None,
        take_lock,
        ran: 0,
    };
    let status = aofload::load_all(&dir, manifest, &opts, &mut target);
    drop(target);
    state.persist.loaded_bytes.store(total, Ordering::Relaxed);
    load::stop_loading(state);
    state.propagation.set_active(was_active);
    status
}

/// loadDataFromDisk with `appendonly yes`: load the log, then open it for appending. Err:
/// the failure was logged and the server must not serve.
pub fn load_at_start(state: &ServerState) -> Result<(), ()> {
    let started = Instant::now();
    let mut manifest = read_manifest(state)?;
    upgrade_old_style(state, &mut manifest)?;
    let status = load_files(state, &manifest);
    match status {
        Status::Failed | Status::OpenErr => return Err(()),
        Status::NotExist => {}
        _ => crate::log::notice(&format!(
            "DB loaded from append only file: {:.3} seconds",
            started.elapsed().as_secs_f64()
        )),
    }
    open_on_start(state, manifest)
}

/// aofOpenIfNeededOnServerStart: a base file for an empty log, the last incremental file
/// opened for appending (a new one if there is none), the manifest saved.
fn open_on_start(state: &ServerState, mut m: Manifest) -> Result<(), ()> {
    let c = state.config.read().clone();
    let dir = settings::aof_dir(&c);
    let name = settings::appendfilename(&c);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        crate::log::warning(&format!(
            "Can't open or create append-only dir {}: {}",
            dir.display(),
            crate::config::strerror(&e)
        ));
        return Err(());
    }
    if m.base.is_none() && m.incr.is_empty() {
        let base = m.new_base(&name, settings::aof_use_rdb_preamble(&c));
        rewrite_now(state, &dir.join(&base))?;
        crate::log::notice(&format!("Creating AOF base file {base} on server start"));
    }
    let existed = !m.incr.is_empty();
    let incr = m.last_incr(&name);
    let file = open_append(&dir.join(&incr)).map_err(|e| {
        crate::log::warning(&format!(
            "Can't open the append-only file {incr}: {}",
            crate::config::strerror(&e)
        ));
    })?;
    write_manifest(&dir, &manifest_name(&c), &m.to_text()).map_err(|e| {
        crate::log::warning(&format!(
            "Can't open the AOF manifest file {}: {}",
            manifest_name(&c),
            crate::config::strerror(&e)
        ));
    })?;
    let incr_size = file.metadata().map(|m| m.len()).unwrap_or(0);
    start_appender(state, file, incr_size, &m);
    *state.persist.manifest.lock() = Some(m);
    state.persist.aof_state.store(ON, Ordering::Relaxed);
    crate::log::notice(&if existed {
        format!("Opening AOF incr file {incr} on server start")
    } else {
        format!("Creating AOF incr file {incr} on server start")
    });
    Ok(())
}

fn open_append(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
}

/// Install the live log writing to `file` and turn propagation on.
fn start_appender(state: &ServerState, file: std::fs::File, incr_size: u64, m: &Manifest) {
    let c = state.config.read().clone();
    let a = Appender::start(file, incr_size, Fsync::parse(&c.appendfsync));
    a.timestamps.store(
        c.get("aof-timestamp-enabled").is_some_and(|v| v == "yes"),
        Ordering::Relaxed,
    );
    a.no_fsync_on_rewrite.store(
        c.get("no-appendfsync-on-rewrite")
            .is_some_and(|v| v == "yes"),
        Ordering::Relaxed,
    );
    let dir = settings::aof_dir(&c);
    let size = |n: &str| std::fs::metadata(dir.join(n)).map_or(0, |m| m.len());
    let base = m.base.as_ref().map_or(0, |b| size(&b.name));
    let total: u64 = m.load_order().map(|f| size(&f.name)).sum();
    a.base_size.store(base, Ordering::Relaxed);
    a.current_size.store(total, Ordering::Relaxed);
    *state.persist.aof.write() = Some(a);
    refresh_propagation(state);
}

/// Propagation runs while the log is written or a replica listens.
pub fn refresh_propagation(state: &ServerState) {
    let on = state.persist.aof.read().is_some() || state.replication.has_backlog();
    state.propagation.set_active(on);
}

/// The rewrite's base file contents, written synchronously (rewriteAppendOnlyFile): the
/// dataset as it is now, to `dest` through a temp file. The caller holds the server lock.
fn rewrite_now(state: &ServerState, dest: &Path) -> Result<(), ()> {
    let (sink, plan, use_rdb) = begin_base(state).map_err(|_| {
        crate::log::warning("Can't rewrite the AOF while another job captures the dataset");
    })?;
    let tmp = settings::dir(&state.config.read())
        .join(format!("temp-rewriteaof-{}.aof", std::process::id()));
    let none = AtomicBool::new(false);
    write_base(state, &sink, &plan, use_rdb, &tmp, &none)
        .and_then(|_| {
            std::fs::rename(&tmp, dest).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                format!(
                    "Error moving temp append only file on the final destination: {}",
                    crate::config::strerror(&e)
                )
            })
        })
        .map_err(|msg| crate::log::warning(&msg))
}

/// Start the snapshot a base file is written from: RDB records (aof-use-rdb-preamble) or
/// commands.
fn begin_base(
    state: &ServerState,
) -> Result<(Arc<Sink>, snapshot::Plan, bool), crate::keyspace::CaptureBusy> {
    let plan = save::plan(state, true);
    let use_rdb = settings::aof_use_rdb_preamble(&state.config.read());
    let records = if use_rdb {
        Records::Rdb(plan.format)
    } else {
        Records::Custom(crate::aof::encode::rewrite_key)
    };
    let sink = snapshot::begin_capture(&state.keyspace, records)?;
    Ok((sink, plan, use_rdb))
}

/// Write a base file from the snapshot into `tmp` and sync it (the caller renames it). The
/// error is the line redis-server logs.
fn write_base(
    state: &ServerState,
    sink: &Sink,
    plan: &snapshot::Plan,
    use_rdb: bool,
    tmp: &Path,
    cancelled: &AtomicBool,
) -> Result<u64, String> {
    let werr = |e: std::io::Error| {
        let _ = std::fs::remove_file(tmp);
        format!(
            "Write error writing append only file on disk: {}",
            crate::config::strerror(&e)
        )
    };
    let f = match std::fs::File::create(tmp) {
        Ok(f) => f,
        Err(e) => {
            snapshot::finish(&state.keyspace, sink);
            return Err(format!(
                "Opening the temp file for AOF rewrite in rewriteAppendOnlyFile(): {}",
                crate::config::strerror(&e)
            ));
        }
    };
    let w = std::io::BufWriter::with_capacity(1 << 16, f);
    let stop = || cancelled.load(Ordering::Relaxed);
    let (w, n) = if use_rdb {
        snapshot::write(&state.keyspace, sink, plan, w, &stop).map_err(werr)?
    } else {
        let r = write_commands(state, sink, plan, w, &stop);
        snapshot::finish(&state.keyspace, sink);
        r.map_err(werr)?
    };
    let f = w.into_inner().map_err(|e| werr(e.into_error()))?;
    f.sync_all().map_err(werr)?;
    Ok(n)
}

/// rewriteAppendOnlyFileRio: the dataset as commands (a timestamp annotation when enabled,
/// FUNCTION LOAD per library, then per database a SELECT and each key's commands).
fn write_commands<W: Write>(
    state: &ServerState,
    sink: &Sink,
    plan: &snapshot::Plan,
    mut w: W,
    stop: &dyn Fn() -> bool,
) -> std::io::Result<(W, u64)> {
    let mut n = 0u64;
    let mut head = Vec::new();
    if state
        .config
        .read()
        .get("aof-timestamp-enabled")
        .is_some_and(|v| v == "yes")
    {
        crate::aof::encode::timestamp(&mut head, plan.aux.ctime);
    }
    for code in &plan.functions {
        crate::aof::encode::function_load(&mut head, code);
    }
    w.write_all(&head)?;
    n += head.len() as u64;
    for db in 0..state.keyspace.databases() {
        let mut selected = false;
        for idx in 0..crate::keyspace::SHARDS {
            if stop() {
                return Err(std::io::ErrorKind::Interrupted.into());
            }
            if let Some(bytes) = snapshot::take(&state.keyspace, sink, db, idx) {
                if !selected {
                    let mut s = Vec::new();
                    crate::aof::encode::select(&mut s, db);
                    w.write_all(&s)?;
                    n += s.len() as u64;
                    selected = true;
                }
                w.write_all(&bytes)?;
                n += bytes.len() as u64;
            }
        }
    }
    Ok((w, n))
}

/// The temp incremental file written while the log waits for its first rewrite.
fn temp_incr_name(c: &crate::config::Config) -> String {
    format!("temp-{}.incr", settings::appendfilename(c))
}

/// rewriteAppendOnlyFileBackground: start BGREWRITEAOF. The caller holds the server lock.
/// From now on the log appends to a new incremental file, and a base file of the dataset as
/// of now is written on a thread of its own.
pub fn rewrite_background(state: &ServerState) -> Result<(), StartError> {
    if state.persist.job.lock().is_some() {
        return Err(StartError::Busy);
    }
    let Some(server) = state.persist.server.get().and_then(|w| w.upgrade()) else {
        return Err(StartError::Failed);
    };
    let c = state.config.read().clone();
    let dir = settings::aof_dir(&c);
    let fail = |st: &ServerState| {
        st.persist.stats.lock().aof_last_rewrite_ok = false;
        Err(StartError::Failed)
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        crate::log::warning(&format!(
            "Can't open or create append-only dir {}: {}",
            dir.display(),
            crate::config::strerror(&e)
        ));
        return fail(state);
    }
    // openNewIncrAofForAppend: writes from this moment go to a new incremental file (the
    // temp one while waiting for the first rewrite), in step with the snapshot below.
    let waiting = state.persist.aof_state.load(Ordering::Relaxed) == WAIT_REWRITE;
    let appender = state.persist.aof.read().clone();
    if let Some(a) = &appender {
        let mut m = state.persist.manifest.lock().clone().unwrap_or_default();
        let name = if waiting {
            temp_incr_name(&c)
        } else {
            m.new_incr(&settings::appendfilename(&c))
        };
        let file = match std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(dir.join(&name))
        {
            Ok(f) => f,
            Err(e) => {
                crate::log::warning(&format!(
                    "Can't open the append-only file {name}: {}",
                    crate::config::strerror(&e)
                ));
                return fail(state);
            }
        };
        if !waiting {
            if write_manifest(&dir, &manifest_name(&c), &m.to_text()).is_err() {
                return fail(state);
            }
            *state.persist.manifest.lock() = Some(m);
        }
        crate::log::notice(&format!(
            "Creating AOF incr file {name} on background rewrite"
        ));
        a.switch_file(file);
    }
    let (sink, plan, use_rdb) = match begin_base(state) {
        Ok(b) => b,
        Err(_) => return Err(StartError::Busy),
    };
    let id = state.persist.next_job.fetch_add(1, Ordering::Relaxed);
    let cancelled = Arc::new(AtomicBool::new(false));
    *state.persist.job.lock() = Some(Job {
        kind: JobKind::AofRewrite,
        id,
        started: Instant::now(),
        sink: sink.clone(),
        cancelled: cancelled.clone(),
        keys_total: plan.sizes.iter().map(|s| s.0).sum(),
    });
    state.persist.stats.lock().aof_rewrites += 1;
    state
        .persist
        .rewrite_scheduled
        .store(false, Ordering::Relaxed);
    if let Some(a) = &appender {
        a.child_active.store(true, Ordering::Relaxed);
    }
    let tmp = temp_base_path(state, id);
    let spawned = std::thread::Builder::new()
        .name("bgrewriteaof".into())
        .spawn(move || {
            let r = write_base(&server, &sink, &plan, use_rdb, &tmp, &cancelled);
            rewrite_done(&server, id, r, &tmp, &cancelled);
        });
    if spawned.is_err() {
        snapshot::finish(
            &state.keyspace,
            &state.persist.job.lock().take().expect("set above").sink,
        );
        crate::log::warning(
            "Can't rewrite append only file in background: fork: Resource temporarily unavailable",
        );
        return fail(state);
    }
    crate::log::notice(&format!(
        "Background append only file rewriting started by pid {}",
        std::process::id()
    ));
    Ok(())
}

fn temp_base_path(state: &ServerState, id: u64) -> PathBuf {
    settings::aof_dir(&state.config.read()).join(format!(
        "temp-rewriteaof-bg-{}-{id}.aof",
        std::process::id()
    ))
}

/// backgroundRewriteDoneHandler: install the new base file, retire the rewritten
/// incremental files, save the manifest, remove the history.
fn rewrite_done(
    state: &ServerState,
    id: u64,
    r: Result<u64, String>,
    tmp: &Path,
    cancelled: &AtomicBool,
) {
    // Everything below changes what commands see (the manifest, the files): under the lock.
    let _guard = state.lock.lock_blocking();
    let job = {
        let mut job = state.persist.job.lock();
        match job.as_ref() {
            Some(j) if j.id == id => job.take(),
            _ => None,
        }
    };
    if let Some(a) = state.persist.aof.read().as_ref() {
        a.child_active.store(false, Ordering::Relaxed);
    }
    if cancelled.load(Ordering::Relaxed) || job.is_none() {
        let _ = std::fs::remove_file(tmp);
        return;
    }
    let job = job.expect("checked");
    let secs = job.started.elapsed().as_secs() as i64;
    let c = state.config.read().clone();
    let dir = settings::aof_dir(&c);
    let name = settings::appendfilename(&c);
    let outcome: Result<(), String> = (|| {
        r?;
        crate::log::notice("Background AOF rewrite terminated with success");
        let mut m = state.persist.manifest.lock().clone().unwrap_or_default();
        let base = m.new_base(&name, settings::aof_use_rdb_preamble(&c));
        std::fs::rename(tmp, dir.join(&base)).map_err(|e| {
            format!(
                "Error trying to rename the temporary AOF base file {} into {}: {}",
                tmp.display(),
                dir.join(&base).display(),
                crate::config::strerror(&e)
            )
        })?;
        crate::log::notice(&format!(
            "Successfully renamed the temporary AOF base file {} into {base}",
            tmp.file_name().unwrap_or_default().to_string_lossy()
        ));
        let waiting = state.persist.aof_state.load(Ordering::Relaxed) == WAIT_REWRITE;
        if waiting {
            let temp = temp_incr_name(&c);
            let incr = m.new_incr(&name);
            std::fs::rename(dir.join(&temp), dir.join(&incr)).map_err(|e| {
                let _ = std::fs::remove_file(dir.join(&base));
                format!(
                    "Error trying to rename the temporary AOF incr file {temp} into {incr}: {}",
                    crate::config::strerror(&e)
                )
            })?;
            crate::log::notice(&format!(
                "Successfully renamed the temporary AOF incr file {temp} into {incr}"
            ));
        }
        let aof_on = state.persist.aof.read().is_some();
        m.mark_rewritten_incr_as_history(aof_on);
        write_manifest(&dir, &manifest_name(&c), &m.to_text()).map_err(|e| {
            format!(
                "Can't persist the AOF manifest: {}",
                crate::config::strerror(&e)
            )
        })?;
        // The history goes (aofDelHistoryFiles), unless aof-disable-auto-gc.
        if c.get("aof-disable-auto-gc").is_none_or(|v| v != "yes") {
            for h in std::mem::take(&mut m.history) {
                crate::log::notice(&format!(
                    "Removing the history file {} in the background",
                    h.name
                ));
                let _ = std::fs::remove_file(dir.join(&h.name));
            }
            let _ = write_manifest(&dir, &manifest_name(&c), &m.to_text());
        }
        if let Some(a) = state.persist.aof.read().as_ref() {
            let size = |n: &str| std::fs::metadata(dir.join(n)).map_or(0, |x| x.len());
            let base_size = size(&base);
            a.base_size.store(base_size, Ordering::Relaxed);
            a.current_size
                .store(base_size + a.incr_size(), Ordering::Relaxed);
        }
        *state.persist.manifest.lock() = Some(m);
        if waiting {
            state.persist.aof_state.store(ON, Ordering::Relaxed);
        }
        Ok(())
    })();
    let cow = job.sink.stats.peak_buffered.load(Ordering::Relaxed);
    let mut st = state.persist.stats.lock();
    st.aof_last_rewrite_secs = secs;
    st.aof_last_cow = cow;
    match outcome {
        Ok(()) => {
            st.aof_last_rewrite_ok = true;
            st.aof_rewrite_failures = 0;
            crate::log::notice("Background AOF rewrite finished successfully");
        }
        Err(msg) => {
            let _ = std::fs::remove_file(tmp);
            crate::log::warning(&msg);
            crate::log::warning("Background AOF rewrite terminated with error");
            st.aof_last_rewrite_ok = false;
            st.aof_rewrite_failures += 1;
            if state.persist.aof_state.load(Ordering::Relaxed) == WAIT_REWRITE {
                state
                    .persist
                    .rewrite_scheduled
                    .store(true, Ordering::Relaxed);
            }
        }
    }
}

/// CONFIG SET appendonly yes (startAppendOnly): the log is written from now on, to a
/// temp incremental file until a first rewrite has made its base.
pub fn turn_on(state: &ServerState, in_exec: bool) -> Result<(), ()> {
    if state.persist.aof_state.load(Ordering::Relaxed) != OFF {
        return Ok(());
    }
    let c = state.config.read().clone();
    let dir = settings::aof_dir(&c);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        crate::log::warning(&format!(
            "Can't open or create append-only dir {}: {}",
            dir.display(),
            crate::config::strerror(&e)
        ));
        return Err(());
    }
    let temp = dir.join(temp_incr_name(&c));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .open(&temp)
        .map_err(|_| ())?;
    let m = read_manifest(state).unwrap_or_default();
    start_appender(state, file, 0, &m);
    *state.persist.manifest.lock() = Some(m);
    state
        .persist
        .aof_state
        .store(WAIT_REWRITE, Ordering::Relaxed);
    let busy = state.persist.job.lock().as_ref().map(|j| j.kind);
    if busy == Some(JobKind::Rdb) || in_exec {
        state
            .persist
            .rewrite_scheduled
            .store(true, Ordering::Relaxed);
        crate::log::warning(if in_exec {
            "AOF was enabled during a transaction. An AOF background was scheduled to start when possible."
        } else {
            "AOF was enabled but there is already another background operation. An AOF background was scheduled to start when possible."
        });
        return Ok(());
    }
    if busy == Some(JobKind::AofRewrite) {
        crate::log::warning("AOF was enabled but there is already an AOF rewriting in background. Stopping background AOF and starting a rewrite now.");
        save::cancel(state, JobKind::AofRewrite);
    }
    if rewrite_background(state).is_err() {
        turn_off(state);
        crate::log::warning("Redis needs to enable the AOF but can't trigger a background AOF rewrite operation. Check the above logs for more info about the error.");
        return Err(());
    }
    Ok(())
}

/// CONFIG SET appendonly no (stopAppendOnly): the last writes synced, the log closed, a
/// rewrite in progress stopped.
pub fn turn_off(state: &ServerState) {
    if let Some(a) = state.persist.aof.write().take() {
        a.stop();
    }
    save::cancel(state, JobKind::AofRewrite);
    state
        .persist
        .rewrite_scheduled
        .store(false, Ordering::Relaxed);
    state.persist.aof_state.store(OFF, Ordering::Relaxed);
    *state.persist.manifest.lock() = None;
    refresh_propagation(state);
}

/// What the cron has to start for the log.
pub fn due(state: &ServerState) -> bool {
    if state.persist.job.lock().is_some() || state.persist.loading.load(Ordering::Relaxed) {
        return false;
    }
    if state.persist.rewrite_scheduled.load(Ordering::Relaxed) {
        return true;
    }
    let Some(a) = state.persist.aof.read().clone() else {
        return false;
    };
    if state.persist.aof_state.load(Ordering::Relaxed) != ON {
        return false;
    }
    let c = state.config.read();
    let perc: u64 = c
        .get("auto-aof-rewrite-percentage")
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let min: u64 = c
        .get("auto-aof-rewrite-min-size")
        .and_then(|v| crate::config::memtoull(v.as_bytes()))
        .unwrap_or(64 << 20);
    let current = a.current_size.load(Ordering::Relaxed);
    if perc == 0 || current <= min {
        return false;
    }
    let base = a.base_size.load(Ordering::Relaxed).max(1);
    let growth = (current * 100 / base).saturating_sub(100);
    if growth >= perc {
        crate::log::notice(&format!(
            "Starting automatic rewriting of AOF on {growth}% growth"
        ));
        return true;
    }
    false
}

/// Write and sync the log before the server stops (prepareForShutdown).
pub fn sync_for_shutdown(state: &ServerState) {
    if let Some(a) = state.persist.aof.read().as_ref() {
        crate::log::notice("Calling fsync() on the AOF file.");
        a.flush_and_sync();
    }
}

/// DEBUG LOADAOF: what is buffered written, the dataset emptied, the log's files loaded
/// back; the change count starts again (nothing to propagate). A log that does not load
/// stops the server, as redis-server exits.
pub fn debug_loadaof(state: &ServerState) {
    if let Some(a) = state.persist.aof.read().as_ref() {
        a.flush_and_sync();
    }
    load::empty_data(state, state.clock.now_ms());
    let m = state.persist.manifest.lock().clone().unwrap_or_default();
    // The caller holds the server lock: the loader must not take it again.
    let status = load_files_locked(state, &m);
    if !matches!(
        status,
        Status::Ok | Status::Empty | Status::Truncated | Status::NotExist
    ) {
        state.shutdown.cancel();
        return;
    }
    state.dirty.store(0, Ordering::Relaxed);
    crate::log::warning("Append Only File loaded by DEBUG LOADAOF");
}
