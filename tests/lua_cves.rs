//! The 2025 Redis Lua CVEs, one regression test each: the attack fails with an error (the
//! exact replies are in conformance/lua_hardening.case, recorded from redis-server), the server
//! keeps serving, and nothing the attack tried is visible to the next script or client.

mod common;

use redis::aio::MultiplexedConnection;

async fn eval(c: &mut MultiplexedConnection, script: &str) -> redis::RedisResult<redis::Value> {
    redis::cmd("EVAL").arg(script).arg(0).query_async(c).await
}

fn err_text(r: redis::RedisResult<redis::Value>) -> String {
    match r {
        Err(e) => e.to_string(),
        Ok(v) => panic!("expected an error, got {v:?}"),
    }
}

async fn still_serving(c: &mut MultiplexedConnection) {
    let v: String = redis::cmd("EVAL")
        .arg("return ('ok'):upper()")
        .arg(0)
        .query_async(c)
        .await
        .expect("scripts still run");
    assert_eq!(v, "OK");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cve_2025_46817_unpack_ranges_that_overflow_fail_cleanly() {
    let s = common::server().await;
    let mut c = common::client(&s).await;
    for range in [
        "-2, 2147483647",
        "0, 2147483647",
        "-2147483648, -2",
        "-2147483648, 2147483647",
        "1, 8000",
        "1, 7999",
    ] {
        let e = err_text(eval(&mut c, &format!("return {{unpack({{1,2,3}}, {range})}}")).await);
        assert!(e.contains("too many results to unpack"), "{range}: {e}");
    }
    let n: i64 = redis::cmd("EVAL")
        .arg("return select('#', unpack({}, 1, 7990))")
        .arg(0)
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(n, 7990);
    still_serving(&mut c).await;
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cve_2025_46818_basic_type_metatables_cannot_be_changed_for_other_clients() {
    let s = common::server().await;
    let mut attacker = common::client(&s).await;
    for attack in [
        "getmetatable('').__index = {upper = function() return 'owned' end}",
        "getmetatable('').__index.upper = function() return 'owned' end",
        "rawset(getmetatable(''), '__index', {})",
        "setmetatable(getmetatable(''), {})",
        "string.upper = function() return 'owned' end",
    ] {
        let e = err_text(eval(&mut attacker, &format!("{attack}; return 1")).await);
        assert!(
            e.contains("Attempt to modify a readonly table"),
            "{attack}: {e}"
        );
    }
    // Another client (in Redis, possibly another user) sees the pristine string library.
    let mut victim = common::client(&s).await;
    still_serving(&mut victim).await;
    let t: String = redis::cmd("EVAL")
        .arg(
            "return type(rawget(_G, 'debug')) .. type(getmetatable(1)) .. type(getmetatable(true))",
        )
        .arg(0)
        .query_async(&mut victim)
        .await
        .unwrap();
    assert_eq!(t, "nilnilnil");
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cve_2025_46819_malformed_long_string_delimiters_fail_cleanly() {
    let s = common::server().await;
    let mut c = common::client(&s).await;
    // Every shape of broken long bracket, at top level, in comments and through loadstring:
    // each is a compile or load error whose text holds only bytes of the script.
    let mut shapes = Vec::new();
    for eqs in 0..4 {
        let e = "=".repeat(eqs);
        for tail in ["", "x", "\n", "[", "[ a ]", "[ a ]=]", "[ a ]==", "[\n]"] {
            shapes.push(format!("return [{e}{tail}"));
            shapes.push(format!("--[{e}{tail}"));
        }
    }
    for body in &shapes {
        match eval(&mut c, body).await {
            Ok(_) => {}
            Err(e) => {
                let text = e.to_string();
                assert!(text.is_ascii(), "{body:?}: non-script bytes in {text:?}");
            }
        }
        let quoted = body
            .replace('\\', "\\\\")
            .replace('\n', "\\n")
            .replace('\'', "\\'");
        let r = eval(
            &mut c,
            &format!("local f, e = loadstring('{quoted}') return e or 'ok'"),
        )
        .await;
        match r {
            Ok(redis::Value::BulkString(b)) => assert!(b.is_ascii(), "{body:?}: {b:?}"),
            Ok(other) => panic!("{body:?}: {other:?}"),
            Err(e) => panic!("{body:?}: loadstring raised {e}"),
        }
    }
    still_serving(&mut c).await;
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cve_2025_49844_collections_during_parsing_leave_the_server_sound() {
    let s = common::server().await;
    let mut c = common::client(&s).await;
    // Memory pressure and forced collections around and during the compilation of large
    // chunks, in fresh interpreters (SCRIPT FLUSH), many times over: with the chunk names
    // anchored the parser never touches a collected name.
    let attack = "local junk = {} for i = 1, 200 do junk[i] = string.rep('x', 2000) .. i end junk = nil \
                  collectgarbage('collect') local src = {} for i = 1, 1500 do \
                  src[i] = 't[' .. i .. '] = \"' .. string.rep('y', 40) .. i .. '\"' end \
                  local f = loadstring('local t = {} ' .. table.concat(src, ' '), 'c' .. math.random(1000000)) \
                  collectgarbage('collect') return type(f)";
    for round in 0..20 {
        let _: () = redis::cmd("SCRIPT")
            .arg("FLUSH")
            .query_async(&mut c)
            .await
            .unwrap();
        let t: String = redis::cmd("EVAL")
            .arg(format!("{attack} -- {round}"))
            .arg(0)
            .query_async(&mut c)
            .await
            .unwrap();
        assert_eq!(t, "function");
    }
    still_serving(&mut c).await;
    s.shutdown().await;
}

/// Found by the lua_sandbox fuzz target: each cached script held one of mlua's auxiliary
/// stack slots, so about 8000 distinct scripts exhausted them and every later script run
/// panicked its connection. The cache now lives in the Lua registry, unbounded as Redis's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_distinct_scripts_stay_cached_and_runnable() {
    let s = common::server().await;
    let mut c = common::client(&s).await;
    for chunk in 0..10 {
        let mut p = redis::pipe();
        for i in 0..1000 {
            p.cmd("EVAL").arg(format!("return {} -- {chunk}", i)).arg(0);
        }
        let r: Vec<i64> = p.query_async(&mut c).await.expect("scripts run");
        assert_eq!(r.len(), 1000);
        assert_eq!(r[999], 999);
    }
    let n: i64 = redis::cmd("EVAL")
        .arg("return 10001")
        .arg(0)
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(n, 10001);
    s.shutdown().await;
}
