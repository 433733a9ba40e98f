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

/// A field of one client's CLIENT LIST line (by its name), as an integer.
async fn client_field(control: &mut common::Raw, name: &str, field: &str) -> Option<i64> {
    let list = cmd!(control, "CLIENT", "LIST");
    let text = String::from_utf8_lossy(&list).into_owned();
    let line = text
        .lines()
        .find(|l| l.contains(&format!(" name={name} ")))?;
    let value = line
        .split(' ')
        .find_map(|kv| kv.strip_prefix(&format!("{field}=")))?;
    value.parse().ok()
}

/// Send `*2\r\n$size\r\n` and `size` bytes (the request stays incomplete), then wait until
/// the server holds it: the client's tot-mem is at least `size`.
async fn fill_query_buffer(
    control: &mut common::Raw,
    c: &mut common::Raw,
    name: &str,
    size: usize,
) -> i64 {
    let mut req = format!("*2\r\n${size}\r\n").into_bytes();
    req.resize(req.len() + size, b'v');
    c.send(&req).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let mem = client_field(control, name, "tot-mem").await.unwrap_or(0);
        if mem >= size as i64 || std::time::Instant::now() > deadline {
            return mem;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maxmemory_clients_evicts_the_biggest_client_and_spares_no_evict_ones() {
    let server = common::server().await;
    let mut control = common::Raw::connect(&server).await;
    cmd!(control, "CLIENT", "SETNAME", "control");
    assert_eq!(cmd!(control, "CLIENT", "NO-EVICT", "on"), b"+OK\r\n");
    let mut clients = Vec::new();
    for (name, size) in [("small", 200_000), ("big", 900_000), ("exempt", 2_000_000)] {
        let mut c = common::Raw::connect(&server).await;
        cmd!(c, "CLIENT", "SETNAME", name);
        if name == "exempt" {
            cmd!(c, "CLIENT", "NO-EVICT", "on");
        }
        let mem = fill_query_buffer(&mut control, &mut c, name, size).await;
        assert!(mem >= size as i64, "{name}: tot-mem {mem}");
        clients.push(c);
    }
    let small = client_field(&mut control, "small", "tot-mem")
        .await
        .unwrap();
    let big = client_field(&mut control, "big", "tot-mem").await.unwrap();
    // Room for the small client but not both: the big one goes, the exempt one stays.
    let limit = small + big - 1;
    let set = cmd!(
        control,
        "CONFIG",
        "SET",
        "maxmemory-clients",
        limit.to_string()
    );
    assert_eq!(set, b"+OK\r\n");
    assert_eq!(client_field(&mut control, "big", "tot-mem").await, None);
    assert!(client_field(&mut control, "small", "tot-mem")
        .await
        .is_some());
    assert!(client_field(&mut control, "exempt", "tot-mem")
        .await
        .is_some());
    let info = String::from_utf8_lossy(&cmd!(control, "INFO", "stats")).into_owned();
    assert!(info.contains("evicted_clients:1\r\n"), "{info}");
    assert!(clients[1].closed(std::time::Duration::from_secs(5)).await);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_no_evict_off_lets_the_client_be_evicted_at_once() {
    let server = common::server().await;
    let mut control = common::Raw::connect(&server).await;
    cmd!(control, "CLIENT", "NO-EVICT", "on");
    cmd!(control, "CONFIG", "SET", "maxmemory-clients", "200000");
    let mut c = common::Raw::connect(&server).await;
    cmd!(c, "CLIENT", "SETNAME", "held");
    assert_eq!(cmd!(c, "CLIENT", "NO-EVICT", "on"), b"+OK\r\n");
    // 5,000 watched keys cost Redis 56 bytes each: over the limit, but exempt.
    let keys: Vec<String> = (0..5000).map(|i| format!("key:{i}")).collect();
    let mut watch: Vec<&[u8]> = vec![b"WATCH"];
    watch.extend(keys.iter().map(|k| k.as_bytes()));
    assert_eq!(c.cmd(&watch).await, b"+OK\r\n");
    let mem = client_field(&mut control, "held", "tot-mem").await.unwrap();
    assert!(mem > 200_000, "tot-mem {mem}");
    c.send(b"CLIENT NO-EVICT off\r\n").await;
    assert!(c.closed(std::time::Duration::from_secs(5)).await);
    assert_eq!(client_field(&mut control, "held", "tot-mem").await, None);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_does_not_read_is_evicted_for_its_output_buffer() {
    let server = common::server().await;
    let mut control = common::Raw::connect(&server).await;
    cmd!(control, "CLIENT", "NO-EVICT", "on");
    let value = vec![b'v'; 200_000];
    cmd!(control, "SET", "k", &value);
    cmd!(control, "CONFIG", "SET", "maxmemory-clients", "3000000");
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut c = tokio::net::TcpStream::connect(server.local_addr())
        .await
        .unwrap();
    c.write_all(b"CLIENT SETNAME reader\r\n").await.unwrap();
    let mut ok = [0u8; 5];
    c.read_exact(&mut ok).await.unwrap();
    assert_eq!(&ok, b"+OK\r\n");
    // GETs whose replies are never read: the server keeps serving them into the client's
    // output buffer (the socket buffers fill first) until the client is evicted.
    let mut evicted = false;
    for _ in 0..2000 {
        let sent = c.write_all(b"GET k\r\n").await.is_ok();
        if client_field(&mut control, "reader", "tot-mem")
            .await
            .is_none()
        {
            evicted = true;
            break;
        }
        assert!(sent, "the write failed but the client is listed");
    }
    assert!(evicted, "never evicted");
    server.shutdown().await;
}
