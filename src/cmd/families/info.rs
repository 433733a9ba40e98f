//! INFO: the server's sections, framed exactly as Redis (ioredis and others parse it at connect).

use crate::cmd::runtime::replication::registry::LinkStatus;
use crate::cmd::runtime::state::Ctx;
use crate::cmd::runtime::state::ServerState;
use crate::cmd::runtime::table::Row;
use crate::reply::{CmdResult, Reply};
use bytes::Bytes;
use std::fmt::Write as _;
use std::sync::atomic::Ordering;

pub const COMMANDS: &[Row] = &[Row::new("info", info)];

/// Redis's bytesToHuman.
fn human_bytes(n: u64) -> String {
    let d = n as f64;
    const K: f64 = 1024.0;
    if n < 1024 {
        format!("{n}B")
    } else if d < K * K {
        format!("{:.2}K", d / K)
    } else if d < K * K * K {
        format!("{:.2}M", d / (K * K))
    } else if d < K * K * K * K {
        format!("{:.2}G", d / (K * K * K))
    } else if d < K * K * K * K * K {
        format!("{:.2}T", d / (K * K * K * K))
    } else {
        format!("{:.2}P", d / (K * K * K * K * K))
    }
}

fn read_proc(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn total_system_memory() -> u64 {
    read_proc("/proc/meminfo")
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// (user, system) CPU seconds of this process, from /proc/self/stat (clock ticks of 1/100 s).
fn cpu_times() -> (f64, f64) {
    let stat = read_proc("/proc/self/stat");
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let t = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0) / 100.0;
    (t(11), t(12))
}

fn os_name() -> String {
    let kind = read_proc("/proc/sys/kernel/ostype");
    let rel = read_proc("/proc/sys/kernel/osrelease");
    let kind = kind.trim();
    let kind = if kind.is_empty() {
        std::env::consts::OS
    } else {
        kind
    };
    format!("{} {} {}", kind, rel.trim(), std::env::consts::ARCH).replace("  ", " ")
}

const DEFAULT_SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "errorstats",
    "cluster",
    "keyspace",
];
const ALL_SECTIONS: &[&str] = &[
    "server",
    "clients",
    "memory",
    "persistence",
    "stats",
    "replication",
    "cpu",
    "modules",
    "commandstats",
    "errorstats",
    "latencystats",
    "cluster",
    "keyspace",
];

fn section_title(s: &str) -> &'static str {
    match s {
        "server" => "Server",
        "clients" => "Clients",
        "memory" => "Memory",
        "persistence" => "Persistence",
        "stats" => "Stats",
        "replication" => "Replication",
        "cpu" => "CPU",
        "modules" => "Modules",
        "commandstats" => "Commandstats",
        "errorstats" => "Errorstats",
        "latencystats" => "Latencystats",
        "cluster" => "Cluster",
        _ => "Keyspace",
    }
}

fn info_section(state: &ServerState, name: &str, out: &mut String) {
    let mut kv = |k: &str, v: &dyn std::fmt::Display| {
        let _ = write!(out, "{k}:{v}\r\n");
    };
    let st = &state.stats;
    // Used memory is read before this section's copy of the configuration is made: that
    // transient copy (some kilobytes) is not the server's, and counting it put INFO's figure
    // above what maxmemory's check, run before each command, sees.
    let used_now = crate::alloc::used_memory();
    let cfg = state.config.read().clone();
    match name {
        "server" => {
            let now_us = state.clock.now_us();
            let up = (now_us / 1_000_000 - state.started_s.load(Ordering::Relaxed)).max(0);
            let port = state.local_addr.read().map_or(cfg.port, |a| a.port());
            kv("redis_version", &crate::version::REDIS_VERSION);
            kv("redis_git_sha1", &"00000000");
            kv("redis_git_dirty", &0);
            kv("redis_build_id", &"0");
            let mode = if state.cluster.is_some() {
                "cluster"
            } else {
                "standalone"
            };
            kv("redis_mode", &mode);
            kv("os", &os_name());
            kv("arch_bits", &(usize::BITS));
            kv("monotonic_clock", &"POSIX clock_gettime");
            kv("multiplexing_api", &"epoll");
            kv("atomicvar_api", &"c11-builtin");
            kv("gcc_version", &"0.0.0");
            kv("process_id", &std::process::id());
            kv("process_supervised", &"no");
            kv("run_id", &state.run_id);
            kv("tcp_port", &port);
            kv("server_time_usec", &now_us);
            kv("uptime_in_seconds", &up);
            kv("uptime_in_days", &(up / 86400));
            kv("hz", &cfg.hz);
            kv("configured_hz", &cfg.hz);
            kv("lru_clock", &((now_us / 1_000_000) & ((1 << 24) - 1)));
            kv(
                "executable",
                &std::env::current_exe()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
            );
            kv(
                "config_file",
                &cfg.config_file
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
            );
            kv("io_threads_active", &0);
            if let Some(ms) = state.stopping.remaining_ms(state.clock.now_ms()) {
                kv("shutdown_in_milliseconds", &ms);
            }
        }
        "clients" => {
            // Replicas' links are not counted as clients, as in Redis.
            let replicas = state.replication.replicas.lock().len();
            kv(
                "connected_clients",
                &state.clients.lock().len().saturating_sub(replicas),
            );
            kv("cluster_connections", &0);
            kv("maxclients", &cfg.maxclients);
            kv("client_recent_max_input_buffer", &0);
            kv("client_recent_max_output_buffer", &0);
            kv(
                "blocked_clients",
                &(state.blocking.count() + state.pause.waiting.load(Ordering::Relaxed)),
            );
            kv(
                "tracking_clients",
                &state.tracking.clients.load(Ordering::Relaxed),
            );
            kv("clients_in_timeout_table", &0);
        }
        "memory" => {
            let rss = crate::alloc::rss_bytes();
            let total = total_system_memory();
            // The allocator's count when the process keeps one (the binary does), as Redis.
            let used = used_now.map_or(rss, |u| u as u64);
            kv("used_memory", &used);
            kv("used_memory_human", &human_bytes(used));
            kv("used_memory_rss", &rss);
            kv("used_memory_rss_human", &human_bytes(rss));
            kv("used_memory_peak", &rss);
            kv("used_memory_peak_human", &human_bytes(rss));
            kv("used_memory_peak_perc", &"100.00%");
            kv("used_memory_overhead", &0);
            kv("used_memory_startup", &0);
            kv("used_memory_dataset", &rss);
            kv("used_memory_dataset_perc", &"100.00%");
            // No allocator statistics: the allocator's figures are the process's.
            kv("allocator_allocated", &rss);
            kv("allocator_active", &rss);
            kv("allocator_resident", &rss);
            kv("total_system_memory", &total);
            kv("total_system_memory_human", &human_bytes(total));
            // EVAL scripts and functions share one interpreter: it is counted as EVAL's.
            let lua = state.scripting.memory();
            let vm = lua.lua_bytes as u64;
            let (eval, funcs) = (lua.scripts_bytes as u64, lua.functions_bytes as u64);
            kv("used_memory_lua", &vm);
            kv("used_memory_vm_eval", &vm);
            kv("used_memory_lua_human", &human_bytes(vm));
            kv("used_memory_scripts_eval", &eval);
            kv("number_of_cached_scripts", &lua.cached_scripts);
            kv("number_of_functions", &lua.functions);
            kv("number_of_libraries", &lua.libraries);
            kv("used_memory_vm_functions", &0);
            kv("used_memory_vm_total", &vm);
            kv("used_memory_vm_total_human", &human_bytes(vm));
            kv("used_memory_functions", &funcs);
            kv("used_memory_scripts", &(eval + funcs));
            kv("used_memory_scripts_human", &human_bytes(eval + funcs));
            kv("maxmemory", &cfg.maxmemory);
            kv("maxmemory_human", &human_bytes(cfg.maxmemory));
            kv("maxmemory_policy", &cfg.maxmemory_policy);
            for k in ["allocator_frag", "allocator_rss", "rss_overhead"] {
                kv(&format!("{k}_ratio"), &"1.00");
                kv(&format!("{k}_bytes"), &0);
            }
            kv("mem_fragmentation_ratio", &"1.00");
            kv("mem_fragmentation_bytes", &0);
            // Clients' memory as CLIENT LIST's tot-mem counts it, replicas apart.
            let normal: usize = state
                .clients
                .lock()
                .values()
                .filter(|c| !c.extra.replica.load(Ordering::Relaxed))
                .map(|c| crate::cmd::runtime::client_mem::total(state, c))
                .sum();
            kv(
                "mem_not_counted_for_evict",
                &crate::cmd::runtime::evict::not_counted_memory(state),
            );
            // Redis's shared replication buffer: the backlog's part, and what replicas hold
            // beyond it.
            let (repl_total, repl_backlog, repl_replicas) =
                crate::cmd::runtime::replication::buffer_memory(state);
            kv("mem_replication_backlog", &repl_backlog);
            kv("mem_total_replication_buffers", &repl_total);
            kv("mem_clients_slaves", &repl_replicas);
            kv("mem_clients_normal", &normal);
            kv("mem_cluster_links", &0);
            kv("mem_aof_buffer", &0);
            kv("mem_allocator", &"libc");
            kv("active_defrag_running", &0);
            kv("lazyfree_pending_objects", &state.lazyfree.pending());
            kv("lazyfreed_objects", &state.lazyfree.freed());
        }
        "persistence" => crate::cmd::runtime::persist::info(state, &mut kv),
        "stats" => {
            let l = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
            kv("total_connections_received", &l(&st.total_connections));
            kv("total_commands_processed", &st.total_commands.get());
            kv("instantaneous_ops_per_sec", &0);
            kv("total_net_input_bytes", &l(&st.net_input_bytes));
            kv("total_net_output_bytes", &l(&st.net_output_bytes));
            kv("total_net_repl_input_bytes", &0);
            kv("total_net_repl_output_bytes", &0);
            kv("instantaneous_input_kbps", &"0.00");
            kv("instantaneous_output_kbps", &"0.00");
            kv("instantaneous_input_repl_kbps", &"0.00");
            kv("instantaneous_output_repl_kbps", &"0.00");
            kv("rejected_connections", &l(&st.rejected_connections));
            kv("sync_full", &l(&st.sync_full));
            kv("sync_partial_ok", &l(&st.sync_partial_ok));
            kv("sync_partial_err", &l(&st.sync_partial_err));
            kv("expired_keys", &l(&state.keyspace.expired_keys));
            kv("expired_stale_perc", &"0.00");
            kv("expired_time_cap_reached_count", &0);
            kv("expire_cycle_cpu_milliseconds", &0);
            kv(
                "evicted_keys",
                &state.eviction.evicted_keys.load(Ordering::Relaxed),
            );
            kv(
                "evicted_clients",
                &state.client_limits.evicted.load(Ordering::Relaxed),
            );
            kv("total_eviction_exceeded_time", &0);
            kv("current_eviction_exceeded_time", &0);
            kv("keyspace_hits", &st.keyspace_hits.get());
            kv("keyspace_misses", &st.keyspace_misses.get());
            kv(
                "pubsub_channels",
                &state
                    .pubsub
                    .channels(crate::pubsub::Kind::Channel, None)
                    .len(),
            );
            kv("pubsub_patterns", &state.pubsub.numpat());
            kv(
                "pubsubshard_channels",
                &state
                    .pubsub
                    .channels(crate::pubsub::Kind::Shard, None)
                    .len(),
            );
            let (forks, latest) = {
                let st = state.persist.stats.lock();
                (st.forks, st.latest_fork_us)
            };
            kv("latest_fork_usec", &latest);
            kv("total_forks", &forks);
            kv("migrate_cached_sockets", &state.migrate_sockets.len());
            kv("slave_expires_tracked_keys", &0);
            kv("active_defrag_hits", &0);
            kv("active_defrag_misses", &0);
            kv("active_defrag_key_hits", &0);
            kv("active_defrag_key_misses", &0);
            kv("total_active_defrag_time", &0);
            kv("current_active_defrag_time", &0);
            let (keys, items, prefixes) = state.tracking.totals();
            kv("tracking_total_keys", &keys);
            kv("tracking_total_items", &items);
            kv("tracking_total_prefixes", &prefixes);
            kv("unexpected_error_replies", &0);
            kv(
                "total_error_replies",
                &state.observe.total_error_replies.load(Ordering::Relaxed),
            );
            kv("dump_payload_sanitizations", &0);
            kv("total_reads_processed", &l(&st.reads_processed));
            kv("total_writes_processed", &l(&st.writes_processed));
            kv("io_threaded_reads_processed", &0);
            kv("io_threaded_writes_processed", &0);
            // Replies are written from the client's outbox, never through Redis's resizable
            // reply buffer.
            kv("reply_buffer_shrinks", &0);
            kv("reply_buffer_expands", &0);
        }
        "replication" if state.cluster.is_some() => cluster_replication(state, &mut kv),
        "replication" => {
            use crate::cmd::runtime::replication;
            let link = replication::role::link(state);
            kv("role", &if link.is_some() { "slave" } else { "master" });
            if let Some(l) = &link {
                let now = state.clock.now_ms();
                let up = l.status == LinkStatus::Connected;
                let offset = state.replication.offset();
                // Before any sync there is no master client: Redis shows 1 for both.
                let (read, applied) = if l.read_offset < 0 {
                    (1, 1)
                } else {
                    (l.read_offset, offset)
                };
                kv("master_host", &l.host);
                kv("master_port", &l.port);
                kv("master_link_status", &if up { "up" } else { "down" });
                kv(
                    "master_last_io_seconds_ago",
                    &if l.has_master {
                        (now - l.last_io_ms) / 1000
                    } else {
                        -1
                    },
                );
                kv(
                    "master_sync_in_progress",
                    &u8::from(l.status == LinkStatus::Sync),
                );
                kv("slave_read_repl_offset", &read);
                kv("slave_repl_offset", &applied);
                if !up {
                    kv(
                        "master_link_down_since_seconds",
                        &if l.down_since_s != 0 {
                            now / 1000 - l.down_since_s
                        } else {
                            -1
                        },
                    );
                }
                let c = state.config.read();
                let get = |k: &str| c.get(k).unwrap_or_default();
                kv("slave_priority", &get("replica-priority"));
                kv(
                    "slave_read_only",
                    &u8::from(get("replica-read-only") == "yes"),
                );
                kv(
                    "replica_announced",
                    &u8::from(get("replica-announced") == "yes"),
                );
            }
            let replicas = replication::replicas(state);
            kv("connected_slaves", &replicas.len());
            if let Some((good, _)) = replication::good_replicas(state) {
                kv("min_slaves_good_slaves", &good);
            }
            for (i, r) in replicas.iter().enumerate() {
                kv(
                    &format!("slave{i}"),
                    &format_args!(
                        "ip={},port={},state={},offset={},lag={}",
                        r.ip, r.port, r.state, r.offset, r.lag
                    ),
                );
            }
            kv(
                "master_failover_state",
                &replication::failover::state_name(state),
            );
            let ids = state.replication.ids.lock().clone();
            kv("master_replid", &ids.replid);
            kv("master_replid2", &ids.replid2);
            let (active, size, first, histlen, offset) = replication::backlog_figures(state);
            kv("master_repl_offset", &offset);
            kv("second_repl_offset", &ids.second_offset);
            kv("repl_backlog_active", &(active as u8));
            kv("repl_backlog_size", &size);
            kv("repl_backlog_first_byte_offset", &first);
            kv("repl_backlog_histlen", &histlen);
        }
        "cpu" => {
            let (user, sys) = cpu_times();
            kv("used_cpu_sys", &format!("{sys:.6}"));
            kv("used_cpu_user", &format!("{user:.6}"));
            kv("used_cpu_sys_children", &"0.000000");
            kv("used_cpu_user_children", &"0.000000");
            kv("used_cpu_sys_main_thread", &format!("{sys:.6}"));
            kv("used_cpu_user_main_thread", &format!("{user:.6}"));
        }
        "cluster" => kv("cluster_enabled", &(state.cluster.is_some() as u8)),
        "commandstats" => crate::cmd::runtime::observe::commandstats_info(state, out),
        "errorstats" => crate::cmd::runtime::observe::errorstats_info(state, out),
        "latencystats" => crate::cmd::runtime::observe::latencystats_info(state, out),
        "keyspace" => {
            for i in 0..state.keyspace.databases() {
                let db = state.keyspace.db(i);
                let keys = db.len();
                if keys > 0 {
                    let _ = write!(
                        out,
                        "db{i}:keys={keys},expires={},avg_ttl={}\r\n",
                        db.volatile(),
                        avg_ttl(db, state.clock.now_ms())
                    );
                }
            }
        }
        _ => {}
    }
}

/// Average remaining TTL in ms of the volatile keys, estimated from a bounded sample of each
/// shard (Redis's figure is an estimate too).
fn avg_ttl(db: &crate::keyspace::Db, now: i64) -> i64 {
    let (mut sum, mut n) = (0i64, 0i64);
    for i in 0..crate::keyspace::SHARDS {
        let shard = db.lock_shard(i);
        if shard.volatile == 0 {
            continue;
        }
        for e in shard.map.values().take(256) {
            if e.expires_at() != 0 && e.expires_at() >= now {
                sum = sum.saturating_add(e.expires_at() - now);
                n += 1;
            }
        }
    }
    if n == 0 {
        0
    } else {
        sum / n
    }
}

/// The INFO text for `sections` (already lowercase, in any order): sections in Redis's
/// order, a blank line between them.
pub fn info_text(state: &ServerState, requested: &[String]) -> String {
    let wanted: Vec<&str> = if requested.is_empty() {
        DEFAULT_SECTIONS.to_vec()
    } else if requested.iter().any(|s| s == "all" || s == "everything") {
        ALL_SECTIONS.to_vec()
    } else if requested.iter().any(|s| s == "default") {
        let mut v = DEFAULT_SECTIONS.to_vec();
        v.extend(
            ALL_SECTIONS
                .iter()
                .filter(|s| requested.iter().any(|r| r == *s)),
        );
        v
    } else {
        ALL_SECTIONS
            .iter()
            .copied()
            .filter(|s| requested.iter().any(|r| r == s))
            .collect()
    };
    let mut out = String::new();
    for s in ALL_SECTIONS.iter().filter(|s| wanted.contains(s)) {
        if !out.is_empty() {
            out.push_str("\r\n");
        }
        let _ = write!(out, "# {}\r\n", section_title(s));
        info_section(state, s, &mut out);
    }
    out
}

fn info(ctx: &mut Ctx, a: &[Bytes]) -> CmdResult {
    let requested: Vec<String> = a[1..]
        .iter()
        .map(|s| String::from_utf8_lossy(s).to_ascii_lowercase())
        .collect();
    Ok(Reply::Verbatim(Bytes::from(info_text(
        ctx.state, &requested,
    ))))
}

/// INFO replication on a cluster node: its role in its shard (the replication feed's view).
fn cluster_replication(state: &ServerState, kv: &mut impl FnMut(&str, &dyn std::fmt::Display)) {
    let Some(r) = crate::cmd::runtime::cluster::hooks::replication(state) else {
        return;
    };
    match &r.master {
        Some((ip, port, up)) => {
            kv("role", &"slave");
            kv("master_host", ip);
            kv("master_port", port);
            kv("master_link_status", &if *up { "up" } else { "down" });
            kv("master_last_io_seconds_ago", &if *up { 0 } else { -1 });
            kv("master_sync_in_progress", &0);
            kv("slave_read_repl_offset", &r.offset);
            kv("slave_repl_offset", &r.offset);
            if !up {
                kv("master_link_down_since_seconds", &-1);
            }
            kv("slave_priority", &100);
            kv("slave_read_only", &1);
            kv("replica_announced", &1);
        }
        None => kv("role", &"master"),
    }
    kv("connected_slaves", &r.replicas.len());
    for (i, (ip, port, off, _)) in r.replicas.iter().enumerate() {
        kv(
            &format!("slave{i}"),
            &format!("ip={ip},port={port},state=online,offset={off},lag=0"),
        );
    }
    kv("master_failover_state", &"no-failover");
    kv("master_replid", &r.replid);
    kv(
        "master_replid2",
        &"0000000000000000000000000000000000000000",
    );
    kv("master_repl_offset", &r.offset);
    kv("second_repl_offset", &-1);
    kv("repl_backlog_active", &1);
    kv("repl_backlog_size", &1048576);
    kv("repl_backlog_first_byte_offset", &1);
    kv("repl_backlog_histlen", &r.offset);
}
