mod common;
use common::*;
use resplock::Config;
use std::time::Duration;

fn hello_reply(proto: u8, id: u64) -> Vec<u8> {
    let head = if proto == 3 { "%7" } else { "*14" };
    format!(
        "{head}\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:{proto}\r\n$2\r\nid\r\n:{id}\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n"
    )
    .into_bytes()
}

fn client_id(r: &[u8]) -> u64 {
    String::from_utf8_lossy(r)
        .trim_start_matches(':')
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn hello_3_switches_to_resp3_and_answers_a_map() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    let id = client_id(&cmd!(c, "CLIENT", "ID"));
    assert_eq!(cmd!(c, "HELLO"), hello_reply(2, id));
    assert_eq!(cmd!(c, "HELLO", "3"), hello_reply(3, id));
    assert_eq!(cmd!(c, "GET", "nokey"), b"_\r\n");
    assert_eq!(cmd!(c, "HELLO", "2"), hello_reply(2, id));
    assert_eq!(cmd!(c, "GET", "nokey"), b"$-1\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn hello_rejects_bad_versions_and_options() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(c, "HELLO", "4"),
        b"-NOPROTO unsupported protocol version\r\n"
    );
    assert_eq!(
        cmd!(c, "HELLO", "1"),
        b"-NOPROTO unsupported protocol version\r\n"
    );
    assert_eq!(
        cmd!(c, "HELLO", "x"),
        &b"-ERR Protocol version is not an integer or out of range\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "HELLO", "2", "foo"),
        &b"-ERR Syntax error in HELLO option 'foo'\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "HELLO", "2", "AUTH", "a"),
        &b"-ERR Syntax error in HELLO option 'AUTH'\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "HELLO", "2", "SETNAME", "a b"),
        &b"-ERR Client names cannot contain spaces, newlines or special characters.\r\n"[..]
    );
    let id = client_id(&cmd!(c, "CLIENT", "ID"));
    assert_eq!(cmd!(c, "HELLO", "2", "SETNAME", "nm"), hello_reply(2, id));
    assert_eq!(cmd!(c, "CLIENT", "GETNAME"), b"$2\r\nnm\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn auth_without_a_password_configured() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(
        cmd!(c, "AUTH", "x"),
        &b"-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?\r\n"[..]
    );
    assert_eq!(cmd!(c, "AUTH", "default", "anything"), b"+OK\r\n");
    assert_eq!(
        cmd!(c, "AUTH", "a", "b"),
        &b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"[..]
    );
    assert_eq!(cmd!(c, "AUTH", "a", "b", "c"), b"-ERR syntax error\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn requirepass_gates_commands_until_auth() {
    let s = server_with(Config {
        requirepass: Some("pw".into()),
        ..Config::ephemeral()
    })
    .await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "PING"), b"-NOAUTH Authentication required.\r\n");
    assert_eq!(
        cmd!(c, "CLIENT", "ID"),
        b"-NOAUTH Authentication required.\r\n"
    );
    assert_eq!(
        cmd!(c, "HELLO", "3"),
        &b"-NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time\r\n"[..]
    );
    let wrongpass = b"-WRONGPASS invalid username-password pair or user is disabled.\r\n";
    assert_eq!(cmd!(c, "AUTH", "bad"), wrongpass);
    assert_eq!(cmd!(c, "AUTH", "nouser", "pw"), wrongpass);
    assert_eq!(cmd!(c, "HELLO", "2", "AUTH", "default", "bad"), wrongpass);
    assert_eq!(cmd!(c, "AUTH", "pw"), b"+OK\r\n");
    assert_eq!(cmd!(c, "PING"), b"+PONG\r\n");
    // RESET forgets the authentication.
    assert_eq!(cmd!(c, "RESET"), b"+RESET\r\n");
    assert_eq!(cmd!(c, "PING"), b"-NOAUTH Authentication required.\r\n");
    // HELLO can authenticate and switch protocol at once.
    let r = cmd!(c, "HELLO", "3", "AUTH", "default", "pw");
    assert!(
        r.starts_with(b"%7\r\n"),
        "{:?}",
        String::from_utf8_lossy(&r)
    );
    assert_eq!(cmd!(c, "PING"), b"+PONG\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn reset_restores_resp2_db0_and_clears_the_name() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    cmd!(c, "HELLO", "3");
    cmd!(c, "SELECT", "3");
    cmd!(c, "CLIENT", "SETNAME", "worker");
    cmd!(c, "SET", "k", "v");
    assert_eq!(cmd!(c, "RESET"), b"+RESET\r\n");
    assert_eq!(cmd!(c, "CLIENT", "GETNAME"), b"$-1\r\n");
    assert_eq!(cmd!(c, "GET", "k"), b"$-1\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn ping_echo_and_their_arity_errors() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "PING"), b"+PONG\r\n");
    assert_eq!(cmd!(c, "PING", "hi"), b"$2\r\nhi\r\n");
    assert_eq!(
        cmd!(c, "PING", "a", "b"),
        &b"-ERR wrong number of arguments for 'ping' command\r\n"[..]
    );
    assert_eq!(cmd!(c, "ECHO", "x"), b"$1\r\nx\r\n");
    s.shutdown().await;
}

#[tokio::test]
async fn client_name_commands() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    assert_eq!(cmd!(c, "CLIENT", "GETNAME"), b"$-1\r\n");
    assert_eq!(cmd!(c, "CLIENT", "SETNAME", "foo"), b"+OK\r\n");
    assert_eq!(cmd!(c, "CLIENT", "GETNAME"), b"$3\r\nfoo\r\n");
    assert_eq!(
        cmd!(c, "CLIENT", "SETNAME", "a b"),
        &b"-ERR Client names cannot contain spaces, newlines or special characters.\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "CLIENT", "SETNAME"),
        &b"-ERR wrong number of arguments for 'client|setname' command\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "CLIENT"),
        &b"-ERR wrong number of arguments for 'client' command\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "CLIENT", "foo"),
        &b"-ERR unknown subcommand 'foo'. Try CLIENT HELP.\r\n"[..]
    );
    assert_eq!(cmd!(c, "CLIENT", "SETNAME", ""), b"+OK\r\n");
    assert_eq!(cmd!(c, "CLIENT", "GETNAME"), b"$-1\r\n");
    assert_eq!(
        cmd!(c, "CLIENT", "SETINFO", "LIB-NAME", "redis-rs"),
        b"+OK\r\n"
    );
    assert_eq!(cmd!(c, "CLIENT", "NO-EVICT", "on"), b"+OK\r\n");
    assert_eq!(cmd!(c, "CLIENT", "NO-EVICT", "x"), b"-ERR syntax error\r\n");
    let help = cmd!(c, "CLIENT", "HELP");
    assert!(help.starts_with(
        b"*48\r\n+CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n"
    ));
    s.shutdown().await;
}

#[tokio::test]
async fn client_list_lines_follow_redis_field_order() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    let id = client_id(&cmd!(c, "CLIENT", "ID"));
    cmd!(c, "CLIENT", "SETNAME", "me");
    let r = cmd!(c, "CLIENT", "LIST");
    let text = String::from_utf8_lossy(&r).into_owned();
    let body = text.split_once("\r\n").unwrap().1;
    assert!(body.ends_with("\n\r\n"));
    let line = body.trim_end();
    let keys: Vec<&str> = line
        .split(' ')
        .map(|kv| kv.split_once('=').unwrap().0)
        .collect();
    assert_eq!(
        keys.join(" "),
        "id addr laddr fd name age idle flags db sub psub ssub multi qbuf qbuf-free argv-mem \
         multi-mem rbs rbp obl oll omem tot-mem events cmd user redir resp"
    );
    assert!(line.starts_with(&format!("id={id} addr=127.0.0.1:")));
    assert!(line.contains(" name=me "));
    assert!(line.contains(" flags=N db=0 sub=0 psub=0 ssub=0 multi=-1 "));
    assert!(line.ends_with(" events=r cmd=client|list user=default redir=-1 resp=2"));
    assert_eq!(
        cmd!(c, "CLIENT", "LIST", "TYPE", "foo"),
        &b"-ERR Unknown client type 'foo'\r\n"[..]
    );
    assert_eq!(
        cmd!(c, "CLIENT", "LIST", "ID", "1", "x"),
        &b"-ERR Invalid client ID\r\n"[..]
    );
    assert_eq!(cmd!(c, "CLIENT", "LIST", "ID", "999"), b"$0\r\n\r\n");
    assert_eq!(cmd!(c, "CLIENT", "LIST", "foo"), b"-ERR syntax error\r\n");
    let info = cmd!(c, "CLIENT", "INFO");
    assert!(String::from_utf8_lossy(&info).contains(" cmd=client|info "));
    cmd!(c, "HELLO", "3");
    let info = cmd!(c, "CLIENT", "INFO");
    assert!(info.starts_with(b"="), "verbatim in RESP3");
    assert!(String::from_utf8_lossy(&info).contains("\r\ntxt:id="));
    s.shutdown().await;
}

#[tokio::test]
async fn client_kill_closes_the_other_connection() {
    let s = server().await;
    let mut killer = Raw::connect(&s).await;
    let mut victim = Raw::connect(&s).await;
    let victim_id = client_id(&cmd!(victim, "CLIENT", "ID"));
    assert_eq!(
        cmd!(killer, "CLIENT", "KILL", "ID", victim_id.to_string()),
        b":1\r\n"
    );
    assert!(victim.closed(Duration::from_secs(5)).await);
    assert_eq!(cmd!(killer, "PING"), b"+PONG\r\n");
    assert_eq!(cmd!(killer, "CLIENT", "KILL", "ID", "99999"), b":0\r\n");
    assert_eq!(
        cmd!(killer, "CLIENT", "KILL", "ID", "x"),
        &b"-ERR client-id should be greater than 0\r\n"[..]
    );
    assert_eq!(
        cmd!(killer, "CLIENT", "KILL", "1.2.3.4:5"),
        &b"-ERR No such client\r\n"[..]
    );
    assert_eq!(
        cmd!(killer, "CLIENT", "KILL", "foo", "bar"),
        b"-ERR syntax error\r\n"
    );
    // SKIPME yes (the default) spares the caller.
    let me = client_id(&cmd!(killer, "CLIENT", "ID"));
    assert_eq!(
        cmd!(killer, "CLIENT", "KILL", "ID", me.to_string()),
        b":0\r\n"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn client_kill_by_old_style_address() {
    let s = server().await;
    let mut killer = Raw::connect(&s).await;
    let mut victim = Raw::connect(&s).await;
    let addr = victim.stream.local_addr().unwrap().to_string();
    cmd!(victim, "PING");
    assert_eq!(cmd!(killer, "CLIENT", "KILL", addr.as_str()), b"+OK\r\n");
    assert!(victim.closed(Duration::from_secs(5)).await);
    s.shutdown().await;
}

fn bulk(v: &[u8]) -> Vec<u8> {
    let mut b = format!("${}\r\n", v.len()).into_bytes();
    b.extend_from_slice(v);
    b.extend_from_slice(b"\r\n");
    b
}

#[tokio::test]
async fn large_values_arrive_whole_and_in_order_among_pipelined_replies_and_pushes() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    // Larger than a socket buffer, so the replies are written in several partial writes.
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    let mid: Vec<u8> = (0..40_000u32).map(|i| (i % 13) as u8 + b'a').collect();
    assert_eq!(c.cmd(&[b"SET", b"big", &big]).await, b"+OK\r\n");
    assert_eq!(c.cmd(&[b"SET", b"mid", &mid]).await, b"+OK\r\n");
    let mut batch = Vec::new();
    for args in [
        &[&b"GET"[..], b"big"][..],
        &[b"PING"],
        &[b"MGET", b"mid", b"nokey", b"big", b"mid"],
        &[b"GET", b"mid"],
    ] {
        batch.extend_from_slice(&common::request(args));
    }
    c.send(&batch).await;
    assert_eq!(c.reply().await, bulk(&big));
    assert_eq!(c.reply().await, b"+PONG\r\n");
    let mut mget = b"*4\r\n".to_vec();
    mget.extend_from_slice(&bulk(&mid));
    mget.extend_from_slice(b"$-1\r\n");
    mget.extend_from_slice(&bulk(&big));
    mget.extend_from_slice(&bulk(&mid));
    assert_eq!(c.reply().await, mget);
    assert_eq!(c.reply().await, bulk(&mid));
    // RESP3, with a message this client publishes to itself between two large replies: the
    // message goes out before PUBLISH's reply, after the value before it.
    c.cmd(&[b"HELLO", b"3"]).await;
    c.cmd(&[b"SUBSCRIBE", b"ch"]).await;
    let mut batch = common::request(&[b"GET", b"big"]);
    batch.extend_from_slice(&common::request(&[b"PUBLISH", b"ch", &mid]));
    batch.extend_from_slice(&common::request(&[b"GET", b"mid"]));
    c.send(&batch).await;
    assert_eq!(c.reply().await, bulk(&big));
    let mut msg = b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n".to_vec();
    msg.extend_from_slice(&bulk(&mid));
    assert_eq!(c.reply().await, msg);
    assert_eq!(c.reply().await, b":1\r\n");
    assert_eq!(c.reply().await, bulk(&mid));
    s.shutdown().await;
}

/// Redis frees a closing client before it reads anyone's next request, so a client that saw
/// QUIT's +OK never finds the quitting client still listed.
#[tokio::test]
async fn a_client_that_quit_is_gone_once_its_reply_arrived() {
    let s = server().await;
    let mut other = Raw::connect(&s).await;
    for _ in 0..200 {
        let mut c = Raw::connect(&s).await;
        let addr = c.stream.local_addr().unwrap().to_string();
        assert_eq!(cmd!(c, "QUIT"), b"+OK\r\n");
        assert_eq!(
            cmd!(other, "CLIENT", "KILL", &addr),
            b"-ERR No such client\r\n"
        );
    }
    s.shutdown().await;
}

/// One write holding commands that run at once, a transaction, a script and refused
/// requests: the requests that may wait leave the run of requests served together and the
/// next ones join a new one, and the replies still come back one per request, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pipeline_mixing_commands_transactions_scripts_and_errors_replies_in_order() {
    let s = server().await;
    let mut c = Raw::connect(&s).await;
    let reqs: &[&[&[u8]]] = &[
        &[b"SET", b"k", b"1"],
        &[b"GET", b"k"],
        &[b"MULTI"],
        &[b"INCR", b"k"],
        &[b"EXEC"],
        &[b"EVAL", b"return redis.call('incr', KEYS[1])", b"1", b"k"],
        &[b"GET", b"k"],
        &[b"FOO", b"bar"],
        &[b"GET"],
        &[b"PING"],
    ];
    let mut batch = Vec::new();
    for r in reqs {
        batch.extend(request(r));
    }
    c.send(&batch).await;
    let want: &[&[u8]] = &[
        b"+OK\r\n",
        b"$1\r\n1\r\n",
        b"+OK\r\n",
        b"+QUEUED\r\n",
        b"*1\r\n:2\r\n",
        b":3\r\n",
        b"$1\r\n3\r\n",
        b"-ERR unknown command 'FOO', with args beginning with: 'bar' \r\n",
        b"-ERR wrong number of arguments for 'get' command\r\n",
        b"+PONG\r\n",
    ];
    for w in want {
        assert_eq!(
            String::from_utf8_lossy(&c.reply().await),
            String::from_utf8_lossy(w)
        );
    }
    s.shutdown().await;
}

/// Clients pipelining increments and increment scripts into one key at the same time: every
/// increment lands once, and each client sees its own replies grow, whether its requests ran
/// together under one holding of the lock or one by one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_pipelines_of_commands_and_scripts_lose_no_increment() {
    let s = server().await;
    const CLIENTS: usize = 4;
    const ROUNDS: usize = 50;
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let mut c = Raw::connect(&s).await;
        tasks.push(tokio::spawn(async move {
            let mut batch = Vec::new();
            for i in 0..16 {
                if i % 4 == 3 {
                    batch.extend(request(&[
                        b"EVAL",
                        b"return redis.call('incr', KEYS[1])",
                        b"1",
                        b"n",
                    ]));
                } else {
                    batch.extend(request(&[b"INCR", b"n"]));
                }
            }
            let mut last = 0i64;
            for _ in 0..ROUNDS {
                c.send(&batch).await;
                for _ in 0..16 {
                    let r = c.reply().await;
                    let v = int_of(&r);
                    assert!(v > last, "{v} after {last}");
                    last = v;
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let mut c = Raw::connect(&s).await;
    let total = (CLIENTS * ROUNDS * 16).to_string();
    assert_eq!(
        cmd!(c, "GET", "n"),
        format!("${}\r\n{total}\r\n", total.len()).into_bytes()
    );
    s.shutdown().await;
}
