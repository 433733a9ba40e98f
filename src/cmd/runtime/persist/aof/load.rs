//! Loading the append-only log into the server (loadAppendOnlyFiles): at start, with the
//! upgrade of an old single-file AOF into an AOF directory, and again for DEBUG LOADAOF. The
//! log's commands run through the command table as Redis's AOF client runs them.

use crate::aof::load::{self as aofload, CommandError, Status, Target};
use crate::aof::manifest::{write_manifest, Manifest};
use crate::cmd::runtime::client::Client;
use crate::cmd::runtime::persist::aof::{manifest_name, open_on_start, read_manifest};
use crate::cmd::runtime::persist::load;
use crate::cmd::runtime::persist::settings;
use crate::cmd::runtime::state::{Ctx, ServerState};
use crate::rdb::file::Event;
use crate::rdb::LoadError;
use bytes::Bytes;
use std::sync::atomic::Ordering;
use std::time::Instant;

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
