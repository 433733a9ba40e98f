//! Redis's limits on clients, with its texts: the unauthenticated caps, proto-max-bulk-len,
//! client-query-buffer-limit, client-output-buffer-limit (normal class), `timeout`, and the
//! protocol error texts with raw bytes. Each scenario's expected outcome was recorded from
//! redis-server 7.0.15 (tests/hardening/mod.rs; the differential suite replays them live).

mod common;
mod hardening;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_and_protocol_errors_answer_as_redis_does() {
    let server = common::server().await;
    let mut failures = Vec::new();
    for sc in hardening::scenarios() {
        let got = hardening::run(server.local_addr(), &sc).await;
        if got != sc.redis {
            failures.push(format!(
                "{}:\n  redis:    {}\n  resplock: {}",
                sc.name,
                hardening::show(sc.redis),
                hardening::show(&got)
            ));
        }
    }
    server.shutdown().await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
