//! ACL beyond the recorded replies (conformance/acl.case): the aclfile loaded at start and
//! written by ACL SAVE, users deleted while connected, and the lock deployment the issue asks
//! for: each service its own user, confined to its own lock keys and channels.

mod common;

use resplock::Config;

fn temp_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("resplock-acl-{}-{name}", std::process::id()))
}

async fn connect_as(
    s: &resplock::ServerHandle,
    user: &str,
    pass: &str,
) -> redis::RedisResult<redis::aio::MultiplexedConnection> {
    redis::Client::open(format!("redis://{user}:{pass}@{}", s.local_addr()))?
        .get_multiplexed_async_connection()
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aclfile_users_are_loaded_at_start_and_saved_back() {
    let path = temp_path("users.acl");
    std::fs::write(
        &path,
        "user orders on >o-secret ~lock:orders:* &redisson_lock__channel:* -@all +set +get +del +eval +evalsha +publish\n\
         user default on nopass ~* &* +@all\n",
    )
    .unwrap();
    let mut cfg = Config::ephemeral();
    cfg.aclfile = Some(path.to_string_lossy().into_owned());
    let s = common::server_with(cfg).await;
    let mut orders = connect_as(&s, "orders", "o-secret")
        .await
        .expect("orders logs in");
    let ok: Option<String> = redis::cmd("SET")
        .arg("lock:orders:1")
        .arg("t")
        .arg("NX")
        .arg("PX")
        .arg(30000)
        .query_async(&mut orders)
        .await
        .unwrap();
    assert_eq!(ok.as_deref(), Some("OK"));
    let e = redis::cmd("SET")
        .arg("lock:billing:1")
        .arg("t")
        .query_async::<()>(&mut orders)
        .await
        .unwrap_err();
    assert_eq!(e.code(), Some("NOPERM"));
    let e = redis::cmd("FLUSHALL")
        .query_async::<()>(&mut orders)
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "NOPERM: this user has no permissions to run the 'flushall' command"
    );
    assert!(connect_as(&s, "orders", "wrong").await.is_err());

    // ACL SAVE writes the users back in ACL LIST's form; ACL LOAD reads them again.
    let mut admin = common::client(&s).await;
    let _: () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("billing")
        .arg("on")
        .arg(">b")
        .arg("~lock:billing:*")
        .arg("+@all")
        .query_async(&mut admin)
        .await
        .unwrap();
    let _: () = redis::cmd("ACL")
        .arg("SAVE")
        .query_async(&mut admin)
        .await
        .unwrap();
    let saved = std::fs::read_to_string(&path).unwrap();
    let list: Vec<String> = redis::cmd("ACL")
        .arg("LIST")
        .query_async(&mut admin)
        .await
        .unwrap();
    assert_eq!(
        saved,
        list.iter().map(|l| format!("{l}\n")).collect::<String>()
    );
    let _: () = redis::cmd("ACL")
        .arg("DELUSER")
        .arg("billing")
        .query_async(&mut admin)
        .await
        .unwrap();
    let _: () = redis::cmd("ACL")
        .arg("LOAD")
        .query_async(&mut admin)
        .await
        .unwrap();
    let users: Vec<String> = redis::cmd("ACL")
        .arg("USERS")
        .query_async(&mut admin)
        .await
        .unwrap();
    assert_eq!(users, vec!["billing", "default", "orders"]);
    s.shutdown().await;
    let _ = std::fs::remove_file(&path);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_user_disconnects_its_clients() {
    let s = common::server().await;
    let mut admin = common::client(&s).await;
    let _: () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg("tmp")
        .arg("on")
        .arg(">x")
        .arg("+@all")
        .arg("~*")
        .query_async(&mut admin)
        .await
        .unwrap();
    let mut tmp = connect_as(&s, "tmp", "x").await.unwrap();
    let who: String = redis::cmd("ACL")
        .arg("WHOAMI")
        .query_async(&mut tmp)
        .await
        .unwrap();
    assert_eq!(who, "tmp");
    let n: i64 = redis::cmd("ACL")
        .arg("DELUSER")
        .arg("tmp")
        .query_async(&mut admin)
        .await
        .unwrap();
    assert_eq!(n, 1);
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(redis::cmd("PING")
        .query_async::<String>(&mut tmp)
        .await
        .is_err());
    s.shutdown().await;
}

/// ACL LOAD frees every user it replaces, as Redis's ACLFreeUserAndKillClients does: their
/// clients are closed, even those whose user comes back unchanged, and a caller logged in as one
/// of them gets its +OK before its connection goes. Default-user clients stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acl_load_disconnects_the_clients_of_every_replaced_user() {
    use common::Raw;
    use std::time::Duration;
    let path = temp_path("reload.acl");
    std::fs::write(
        &path,
        "user default on nopass ~* &* +@all\nuser u on >p ~* +@all\nuser v on >p ~* +@all\n",
    )
    .unwrap();
    let mut cfg = Config::ephemeral();
    cfg.aclfile = Some(path.to_string_lossy().into_owned());
    let s = common::server_with(cfg).await;
    let mut admin = Raw::connect(&s).await;
    let mut u = Raw::connect(&s).await;
    let mut v = Raw::connect(&s).await;
    assert_eq!(u.cmd(&[b"AUTH", b"u", b"p"]).await, b"+OK\r\n");
    assert_eq!(v.cmd(&[b"AUTH", b"v", b"p"]).await, b"+OK\r\n");
    assert_eq!(admin.cmd(&[b"ACL", b"LOAD"]).await, b"+OK\r\n");
    assert!(u.closed(Duration::from_secs(2)).await, "u's client stays");
    assert!(v.closed(Duration::from_secs(2)).await, "v's client stays");
    assert_eq!(admin.cmd(&[b"PING"]).await, b"+PONG\r\n");
    // The caller itself, logged in as a replaced user: +OK first, then closed.
    let mut caller = Raw::connect(&s).await;
    assert_eq!(caller.cmd(&[b"AUTH", b"u", b"p"]).await, b"+OK\r\n");
    assert_eq!(caller.cmd(&[b"ACL", b"LOAD"]).await, b"+OK\r\n");
    assert!(caller.closed(Duration::from_secs(2)).await);
    s.shutdown().await;
    let _ = std::fs::remove_file(&path);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requirepass_from_the_command_line_is_the_default_users_password() {
    let mut cfg = Config::ephemeral();
    cfg.requirepass = Some("pw".into());
    let s = common::server_with(cfg).await;
    assert!(connect_as(&s, "default", "nope").await.is_err());
    let mut c = connect_as(&s, "default", "pw")
        .await
        .expect("default with requirepass");
    let user: Vec<redis::Value> = redis::cmd("ACL")
        .arg("GETUSER")
        .arg("default")
        .query_async(&mut c)
        .await
        .unwrap();
    let flags = format!("{:?}", user[1]);
    assert!(!flags.contains("nopass"), "{flags}");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribers_are_disconnected_when_their_channels_are_taken_away() {
    use common::Raw;
    use std::time::Duration;
    let s = common::server().await;
    let mut admin = Raw::connect(&s).await;
    let setuser = |rules: &'static [&'static [u8]]| {
        let mut a: Vec<&[u8]> = vec![b"ACL", b"SETUSER", b"ps"];
        a.extend_from_slice(rules);
        a
    };
    assert_eq!(
        admin
            .cmd(&setuser(&[
                b"on",
                b">p",
                b"+@pubsub",
                b"resetchannels",
                b"&foo:1",
                b"&bar:*",
                b"&other"
            ]))
            .await,
        b"+OK\r\n"
    );
    let subscriber = |what: &'static [&'static [u8]]| {
        let s = &s;
        async move {
            let mut c = Raw::connect(s).await;
            assert_eq!(c.cmd(&[b"AUTH", b"ps", b"p"]).await, b"+OK\r\n");
            c.cmd(what).await;
            c
        }
    };
    let mut channel = subscriber(&[b"SUBSCRIBE", b"foo:1"]).await;
    let mut shard = subscriber(&[b"SSUBSCRIBE", b"foo:1"]).await;
    let mut pattern = subscriber(&[b"PSUBSCRIBE", b"bar:*"]).await;
    let mut kept = subscriber(&[b"SUBSCRIBE", b"other"]).await;
    // Adding a channel takes nothing away.
    assert_eq!(admin.cmd(&setuser(&[b"&more"])).await, b"+OK\r\n");
    assert!(!channel.closed(Duration::from_millis(100)).await);
    // foo:1 goes: its channel and shard-channel subscribers are disconnected.
    assert_eq!(
        admin
            .cmd(&setuser(&[b"resetchannels", b"&bar:*", b"&other"]))
            .await,
        b"+OK\r\n"
    );
    assert!(channel.closed(Duration::from_secs(2)).await);
    assert!(shard.closed(Duration::from_secs(2)).await);
    assert!(!pattern.closed(Duration::from_millis(100)).await);
    // A pattern must be allowed as written: `bar:x*` does not cover `bar:*`.
    assert_eq!(
        admin
            .cmd(&setuser(&[b"resetchannels", b"&bar:x*", b"&other"]))
            .await,
        b"+OK\r\n"
    );
    assert!(pattern.closed(Duration::from_secs(2)).await);
    assert!(!kept.closed(Duration::from_millis(100)).await);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acl_pubsub_default_allchannels_applies_to_new_users_and_reset() {
    use common::Raw;
    let s = common::server().await;
    let mut c = Raw::connect(&s).await;
    for (setting, channels) in [("allchannels", "&*"), ("resetchannels", "resetchannels")] {
        assert_eq!(
            c.cmd(&[b"CONFIG", b"SET", b"acl-pubsub-default", setting.as_bytes()])
                .await,
            b"+OK\r\n"
        );
        c.cmd(&[b"ACL", b"DELUSER", b"u1", b"u2"]).await;
        assert_eq!(
            c.cmd(&[b"ACL", b"SETUSER", b"u1", b"on", b"nopass"]).await,
            b"+OK\r\n"
        );
        assert_eq!(
            c.cmd(&[b"ACL", b"SETUSER", b"u2", b"resetchannels", b"&x", b"reset"])
                .await,
            b"+OK\r\n"
        );
        let l = c.cmd(&[b"ACL", b"LIST"]).await;
        let l = String::from_utf8_lossy(&l);
        assert!(
            l.contains(&format!("user u1 on nopass {channels} -@all")),
            "{l}"
        );
        assert!(
            l.contains(&format!("user u2 off sanitize-payload {channels} -@all")),
            "{l}"
        );
    }
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_acl_log_keeps_acllog_max_len_entries() {
    use common::Raw;
    let s = common::server().await;
    let mut c = Raw::connect(&s).await;
    c.cmd(&[b"CONFIG", b"SET", b"acllog-max-len", b"5"]).await;
    c.cmd(&[
        b"ACL",
        b"SETUSER",
        b"k",
        b"on",
        b">p",
        b"+set",
        b"~object:*",
    ])
    .await;
    let mut k = Raw::connect(&s).await;
    assert_eq!(k.cmd(&[b"AUTH", b"k", b"p"]).await, b"+OK\r\n");
    for j in 0..10 {
        let key = format!("obj:{j}");
        let r = k.cmd(&[b"SET", key.as_bytes(), b"1"]).await;
        assert!(r.starts_with(b"-NOPERM"), "{}", String::from_utf8_lossy(&r));
    }
    assert!(c.cmd(&[b"ACL", b"LOG"]).await.starts_with(b"*5\r\n"));
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_lines_of_the_configuration_define_users_at_start() {
    use common::Raw;
    let mut config = Config::ephemeral();
    let line = |l: &str| l.split(' ').map(String::from).collect::<Vec<_>>();
    config.users = vec![
        line("default on nopass ~* +@all"),
        line("alice on >pw ~a* +get"),
    ];
    let s = common::server_with(config).await;
    let mut c = Raw::connect(&s).await;
    // The default user is reset first: no channels (acl-pubsub-default resetchannels).
    assert_eq!(
        c.cmd(&[b"ACL", b"LIST"]).await,
        b"*2\r\n$108\r\nuser alice on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 ~a* resetchannels -@all +get\r\n$62\r\nuser default on nopass sanitize-payload ~* resetchannels +@all\r\n"
    );
    assert!(c
        .cmd(&[b"SUBSCRIBE", b"foo"])
        .await
        .starts_with(b"-NOPERM this user has no permissions to access one of the channels"));
    let mut a = Raw::connect(&s).await;
    assert_eq!(a.cmd(&[b"AUTH", b"alice", b"pw"]).await, b"+OK\r\n");
    assert_eq!(a.cmd(&[b"GET", b"abc"]).await, b"$-1\r\n");
    s.shutdown().await;
}
