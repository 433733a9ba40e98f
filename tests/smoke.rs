mod common;
use common::*;

#[tokio::test]
async fn set_nx_does_not_overwrite_live_lock() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(c, "SET", "lock", "token-a", "NX", "PX", "30000"),
        b"+OK\r\n"
    );
    assert_eq!(
        cmd!(c, "SET", "lock", "token-b", "NX", "PX", "30000"),
        b"$-1\r\n"
    );
    assert_eq!(cmd!(c, "GET", "lock"), b"$7\r\ntoken-a\r\n");
    s.shutdown().await;
}

#[test]
fn blocking_server_starts_and_stops() {
    let s = resplock::BlockingServer::start(resplock::Config::ephemeral()).unwrap();
    let client = redis::Client::open(format!("redis://{}", s.local_addr())).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let pong: String = rt.block_on(async {
        let mut c = client.get_multiplexed_async_connection().await.unwrap();
        redis::cmd("PING").query_async(&mut c).await.unwrap()
    });
    assert_eq!(pong, "PONG");
    s.shutdown();
}
