//! Lua scripting: EVAL/EVALSHA/SCRIPT with Redis 7.0.15's exact replies (recorded from a real
//! redis-server), well-known lock scripts run unchanged, atomicity under concurrency,
//! BUSY / SCRIPT KILL / UNKILLABLE / NOTBUSY, and hostile scripts.

mod common;

/// (script, KEYS, ARGV) of one step of a lock flow.
type ScriptCall = (&'static str, Vec<&'static str>, Vec<&'static str>);
/// (script, ARGV) of one step of the timestamp-lock flow.
type TsCall = (&'static str, [&'static str; 2]);
use common::*;
use resplock::Config;
use std::time::{Duration, Instant};

/// Jedis / article 000-002: compare-and-delete release.
const RELEASE: &str =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/// Redisson tryLockInnerAsync (article 004).
const REDISSON_LOCK: &str = "if (redis.call('exists', KEYS[1]) == 0) then redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; return redis.call('pttl', KEYS[1]);";
/// Redisson renewExpirationAsync (article 004).
const REDISSON_RENEW: &str = "if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('pexpire', KEYS[1], ARGV[1]); return 1; end; return 0;";
/// Redisson unlockInnerAsync (article 004).
const REDISSON_UNLOCK: &str = "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil;end; local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); return 0; else redis.call('del', KEYS[1]); redis.call('publish', KEYS[2], ARGV[1]); return 1; end; return nil;";

/// Article 003: timestamp lock.
const TS_LOCK: &str = "local now = tonumber(ARGV[1])
local timeout = tonumber(ARGV[2])
local to = now + timeout
local locked = redis.call('SETNX', KEYS[1], to)
if (locked == 1) then
    return 0
end
local kt = redis.call('type', KEYS[1]);
if (kt['ok'] ~= 'string') then
    return 2
end
local keyValue = tonumber(redis.call('get', KEYS[1]))
if (now > keyValue) then
    redis.call('set', KEYS[1], to)
    return 0
end
return 1
";
/// Article 003: timestamp unlock.
const TS_UNLOCK: &str = "local begin = tonumber(ARGV[1])
local timeout = tonumber(ARGV[2])
local kt = redis.call('type', KEYS[1]);
if (kt['ok'] == 'string') then
    local keyValue = tonumber(redis.call('get', KEYS[1]))
    if ((keyValue - begin) == timeout) then
        redis.call('del', KEYS[1])
        return 0
    end
end
return 1
";

fn sha1(s: &str) -> String {
    resplock::script::sha1_hex(s.as_bytes())
}

/// Run `script` with EVAL on `raw`, then with EVALSHA on a fresh key set (the caller passes
/// the same keys/args, so the replies must match).
async fn eval(raw: &mut Raw, script: &str, keys: &[&str], args: &[&str]) -> Vec<u8> {
    let n = keys.len().to_string();
    let mut v: Vec<&[u8]> = vec![b"EVAL", script.as_bytes(), n.as_bytes()];
    v.extend(keys.iter().map(|k| k.as_bytes()));
    v.extend(args.iter().map(|k| k.as_bytes()));
    raw.cmd(&v).await
}

async fn evalsha(raw: &mut Raw, script: &str, keys: &[&str], args: &[&str]) -> Vec<u8> {
    let sha = sha1(script);
    let n = keys.len().to_string();
    let mut v: Vec<&[u8]> = vec![b"EVALSHA", sha.as_bytes(), n.as_bytes()];
    v.extend(keys.iter().map(|k| k.as_bytes()));
    v.extend(args.iter().map(|k| k.as_bytes()));
    raw.cmd(&v).await
}

async fn release(r: &mut Raw, by_sha: bool, tok: &str) -> Vec<u8> {
    if by_sha {
        evalsha(r, RELEASE, &["lock"], &[tok]).await
    } else {
        eval(r, RELEASE, &["lock"], &[tok]).await
    }
}

#[tokio::test]
async fn compare_and_delete_release_deletes_only_own_token_via_eval_and_evalsha() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    for by_sha in [false, true] {
        assert_eq!(
            cmd!(r, "SET", "lock", "tok1", "NX", "PX", "30000"),
            b"+OK\r\n"
        );
        assert_eq!(
            cmd!(r, "SET", "lock", "tok2", "NX", "PX", "30000"),
            b"$-1\r\n"
        );
        assert_eq!(release(&mut r, by_sha, "tok2").await, b":0\r\n");
        assert_eq!(cmd!(r, "GET", "lock"), b"$4\r\ntok1\r\n");
        assert_eq!(release(&mut r, by_sha, "tok1").await, b":1\r\n");
        assert_eq!(cmd!(r, "EXISTS", "lock"), b":0\r\n");
        assert_eq!(release(&mut r, by_sha, "tok1").await, b":0\r\n");
    }
}

#[tokio::test]
async fn redisson_lock_renew_unlock_scripts_behave_as_in_redis() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    let ch = "redisson_lock__channel:{myLock}";
    for by_sha in [false, true] {
        let go = |script: &'static str, keys: Vec<&'static str>, args: Vec<&'static str>| {
            (script, keys, args)
        };
        let steps: Vec<(ScriptCall, &[u8])> = vec![
            (
                go(REDISSON_LOCK, vec!["myLock"], vec!["30000", "uuid:1"]),
                b"$-1\r\n",
            ),
            (
                go(REDISSON_LOCK, vec!["myLock"], vec!["30000", "uuid:1"]),
                b"$-1\r\n",
            ),
            (
                go(REDISSON_RENEW, vec!["myLock"], vec!["30000", "uuid:1"]),
                b":1\r\n",
            ),
            (
                go(REDISSON_RENEW, vec!["myLock"], vec!["30000", "uuid:2"]),
                b":0\r\n",
            ),
            (
                go(
                    REDISSON_UNLOCK,
                    vec!["myLock", ch],
                    vec!["0", "30000", "uuid:2"],
                ),
                b"$-1\r\n",
            ),
            (
                go(
                    REDISSON_UNLOCK,
                    vec!["myLock", ch],
                    vec!["0", "30000", "uuid:1"],
                ),
                b":0\r\n",
            ),
            (
                go(
                    REDISSON_UNLOCK,
                    vec!["myLock", ch],
                    vec!["0", "30000", "uuid:1"],
                ),
                b":1\r\n",
            ),
        ];
        for (i, ((script, keys, args), want)) in steps.into_iter().enumerate() {
            let got = if by_sha {
                evalsha(&mut r, script, &keys, &args).await
            } else {
                eval(&mut r, script, &keys, &args).await
            };
            assert_eq!(got, want, "step {i} by_sha={by_sha}");
            if i == 1 {
                assert_eq!(cmd!(r, "HGET", "myLock", "uuid:1"), b"$1\r\n2\r\n");
                // Another holder is refused with the lock's remaining TTL.
                let other = eval(&mut r, REDISSON_LOCK, &["myLock"], &["30000", "uuid:2"]).await;
                let ttl = int_of(&other);
                assert!(
                    other[0] == b':' && (29000..=30000).contains(&ttl),
                    "{other:?}"
                );
            }
        }
        assert_eq!(cmd!(r, "EXISTS", "myLock"), b":0\r\n");
    }
}

#[tokio::test]
async fn redisson_unlock_publishes_to_the_lock_channel() {
    let s = server().await;
    let mut sub = Raw::connect(&s).await;
    cmd!(sub, "SUBSCRIBE", "redisson_lock__channel:{myLock}");
    let mut r = Raw::connect(&s).await;
    assert_eq!(
        eval(&mut r, REDISSON_LOCK, &["myLock"], &["30000", "t:1"]).await,
        b"$-1\r\n"
    );
    let keys = ["myLock", "redisson_lock__channel:{myLock}"];
    assert_eq!(
        eval(&mut r, REDISSON_UNLOCK, &keys, &["0", "30000", "t:1"]).await,
        b":1\r\n"
    );
    assert_eq!(
        sub.reply().await,
        b"*3\r\n$7\r\nmessage\r\n$31\r\nredisson_lock__channel:{myLock}\r\n$1\r\n0\r\n"
    );
}

#[tokio::test]
async fn timestamp_lock_of_article_003_checks_type_status_reply() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    for by_sha in [false, true] {
        let run = |script: &'static str, args: [&'static str; 2]| (script, args);
        let steps: Vec<(TsCall, &[u8])> = vec![
            (run(TS_LOCK, ["1000", "500"]), b":0\r\n"),
            (run(TS_LOCK, ["1200", "500"]), b":1\r\n"),
            (run(TS_LOCK, ["2000", "500"]), b":0\r\n"),
            (run(TS_UNLOCK, ["1000", "500"]), b":1\r\n"),
            (run(TS_UNLOCK, ["2000", "500"]), b":0\r\n"),
            (run(TS_UNLOCK, ["2000", "500"]), b":1\r\n"),
        ];
        for (i, ((script, args), want)) in steps.into_iter().enumerate() {
            let got = if by_sha {
                evalsha(&mut r, script, &["tslock"], &args).await
            } else {
                eval(&mut r, script, &["tslock"], &args).await
            };
            assert_eq!(got, want, "step {i} by_sha={by_sha}");
        }
        cmd!(r, "HSET", "tslock", "f", "v");
        assert_eq!(
            eval(&mut r, TS_LOCK, &["tslock"], &["1", "1"]).await,
            b":2\r\n"
        );
        cmd!(r, "DEL", "tslock");
    }
}

#[tokio::test]
async fn script_cache_is_keyed_by_sha1_case_insensitively() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    let sha = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db";
    assert_eq!(
        cmd!(r, "EVALSHA", sha, "0"),
        b"-NOSCRIPT No matching script. Please use EVAL.\r\n"
    );
    assert_eq!(
        cmd!(r, "EVALSHA", "abc", "0"),
        b"-NOSCRIPT No matching script. Please use EVAL.\r\n"
    );
    assert_eq!(
        cmd!(r, "SCRIPT", "LOAD", "return 1"),
        format!("$40\r\n{sha}\r\n").into_bytes()
    );
    assert_eq!(cmd!(r, "EVALSHA", sha.to_uppercase(), "0"), b":1\r\n");
    assert_eq!(cmd!(r, "EVALSHA_RO", sha, "0"), b":1\r\n");
    assert_eq!(
        cmd!(r, "SCRIPT", "EXISTS", sha, sha.to_uppercase(), "abc"),
        b"*3\r\n:1\r\n:1\r\n:0\r\n"
    );
    // EVAL caches too.
    cmd!(r, "EVAL", "return 2", "0");
    assert_eq!(cmd!(r, "EVALSHA", sha1("return 2"), "0"), b":2\r\n");
    assert_eq!(
        cmd!(r, "SCRIPT", "FLUSH", "x"),
        b"-ERR SCRIPT FLUSH only support SYNC|ASYNC option\r\n"
    );
    assert_eq!(cmd!(r, "SCRIPT", "FLUSH", "ASYNC"), b"+OK\r\n");
    assert_eq!(cmd!(r, "SCRIPT", "EXISTS", sha), b"*1\r\n:0\r\n");
    assert_eq!(cmd!(r, "SCRIPT", "FLUSH"), b"+OK\r\n");
    assert_eq!(
        cmd!(r, "SCRIPT", "KILL"),
        b"-NOTBUSY No scripts in execution right now.\r\n"
    );
    assert_eq!(
        cmd!(r, "SCRIPT", "EXISTS"),
        b"-ERR wrong number of arguments for 'script|exists' command\r\n"
    );
    assert_eq!(
        cmd!(r, "SCRIPT", "nosuch"),
        b"-ERR unknown subcommand 'nosuch'. Try SCRIPT HELP.\r\n"
    );
    let help = cmd!(r, "SCRIPT", "HELP");
    assert!(help.starts_with(
        b"*17\r\n+SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n"
    ));
}

#[tokio::test]
async fn eval_argument_and_compile_errors_match_redis() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    let cases: &[(&[&str], &str)] = &[
        (&["EVAL", "return 1", "-1"], "-ERR Number of keys can't be negative\r\n"),
        (&["EVAL", "return 1", "2", "a"], "-ERR Number of keys can't be greater than number of args\r\n"),
        (&["EVAL", "return 1", "x"], "-ERR value is not an integer or out of range\r\n"),
        (&["EVAL", "return 1"], "-ERR wrong number of arguments for 'eval' command\r\n"),
        (&["EVAL", "return 'a' .. ", "0"], "-ERR Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'\r\n"),
        (&["EVAL", "\x1bLua", "0"], "-ERR Error compiling script (new function): user_script:1: unexpected symbol near 'char(27)'\r\n"),
        (&["EVAL", "#!lua flags=bad\nreturn 1", "0"], "-ERR Unexpected flag in script shebang: bad\r\n"),
        (&["EVAL_RO", "#!lua\nreturn 1", "0"], "-ERR Can not execute a script with write flag using *_ro command.\r\n"),
        (&["EVAL", "#!lua flags=no-writes\nreturn redis.call('set','a','b')", "0"], "-ERR Write commands are not allowed from read-only scripts. script: 6acb400a50fe96e33eca4e0af6e9dcfb21193726, on @user_script:2.\r\n"),
    ];
    for (args, want) in cases {
        let v: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        assert_eq!(String::from_utf8_lossy(&r.cmd(&v).await), *want, "{args:?}");
    }
}

#[tokio::test]
async fn runtime_errors_carry_redis_texts_and_positions() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    let cases: &[(&str, &str)] = &[
        ("return x", "-ERR user_script:1: Script attempted to access nonexistent global variable 'x' script: 03c387736bb5cc009ff35151572cee04677aa374, on @user_script:1.\r\n"),
        ("x = 1", "-ERR user_script:1: Attempt to modify a readonly table script: 34bce5f775de97f557a34088509c8bfe1ea17e52, on @user_script:1.\r\n"),
        ("string.rep = nil return 1", "-ERR user_script:1: Attempt to modify a readonly table script: a8304a27897e50f6eab073748faab86c9e5b9ac6, on @user_script:1.\r\n"),
        ("rawset(_G,'x',1) return 1", "-ERR Attempt to modify a readonly table script: 370407d93b0e11a2c9fdd10662499a6b5ac61d6f, on @user_script:1.\r\n"),
        ("error('boom')", "-ERR user_script:1: boom script: 82903a0434f1503e152f89c03c9acd881a0e8150, on @user_script:1.\r\n"),
        ("error({err='MYERR x'})", "-MYERR x script: 002c4cc1d277311c0c93418ad109c4f46b432642, on @user_script:1.\r\n"),
        ("return redis.call('nosuch')", "-ERR Unknown Redis command called from script script: 206396248e12c6e742fd7296250433c8d7343b74, on @user_script:1.\r\n"),
        ("return redis.call('get')", "-ERR Wrong number of args calling Redis command from script script: f187dee77f607f7cff00bbabc9df38507582c78d, on @user_script:1.\r\n"),
        ("return redis.call('eval','return 1','0')", "-ERR This Redis command is not allowed from script script: 1e5046f3a9119d3dc9cf5824428b6d9fedd305d2, on @user_script:1.\r\n"),
        ("return redis.call({})", "-ERR Lua redis lib command arguments must be strings or integers script: 80747816df1f4411f7c442b928fce6a814214839, on @user_script:1.\r\n"),
        ("return redis.pcall('nosuch')", "-ERR Unknown Redis command called from script\r\n"),
        ("redis.call('set','str','v') return redis.call('hget','str','x')", "-WRONGTYPE Operation against a key holding the wrong kind of value script: 4a356536d3299256d8e62e5ee998c94af39e7995, on @user_script:1.\r\n"),
        ("return redis.error_reply('My Error')", "-My Error\r\n"),
        ("return redis.error_reply('Oops')", "-ERR Oops\r\n"),
        ("return redis.status_reply('FINE')", "+FINE\r\n"),
        ("local ok, e = pcall(redis.call, 'nosuch') return {tostring(ok), e}", "*2\r\n$5\r\nfalse\r\n$44\r\nERR Unknown Redis command called from script\r\n"),
        ("return redis.setresp(4)", "-ERR RESP version must be 2 or 3. script: 921c0a48021d97dfd5884aeea41875972c7804d9, on @user_script:1.\r\n"),
    ];
    for (script, want) in cases {
        assert_eq!(
            String::from_utf8_lossy(&cmd!(r, "EVAL", script, "0")),
            *want,
            "{script}"
        );
    }
    // Writes before an error stay.
    cmd!(r, "EVAL", "redis.call('set','w','1') error('x')", "0");
    assert_eq!(cmd!(r, "GET", "w"), b"$1\r\n1\r\n");
    assert_eq!(
        cmd!(r, "EVAL_RO", "return redis.call('set','k','v')", "0"),
        b"-ERR Write commands are not allowed from read-only scripts. script: d223ed8c7345b684e8ed044ed472601f536fa58b, on @user_script:1.\r\n"
    );
}

#[tokio::test]
async fn reply_conversions_match_redis_in_resp2_and_resp3() {
    let s = server().await;
    let cases: &[(&str, &str, &str)] = &[
        (
            "return 1e30",
            ":-9223372036854775808\r\n",
            ":-9223372036854775808\r\n",
        ),
        ("return 3.99", ":3\r\n", ":3\r\n"),
        (
            "return {1,2,nil,3}",
            "*2\r\n:1\r\n:2\r\n",
            "*2\r\n:1\r\n:2\r\n",
        ),
        ("return false", "$-1\r\n", "_\r\n"),
        ("return true", ":1\r\n", ":1\r\n"),
        ("redis.setresp(3) return false", ":0\r\n", "#f\r\n"),
        (
            "return {map={a=1}}",
            "*2\r\n$1\r\na\r\n:1\r\n",
            "%1\r\n$1\r\na\r\n:1\r\n",
        ),
        (
            "return {set={a=true}}",
            "*1\r\n$1\r\na\r\n",
            "~1\r\n$1\r\na\r\n",
        ),
        (
            "return {double=0.1}",
            "$19\r\n0.10000000000000001\r\n",
            ",0.10000000000000001\r\n",
        ),
        ("return {big_number='123'}", "$3\r\n123\r\n", "(123\r\n"),
        (
            "return {1, {err='inner'}, {ok='fine'}}",
            "*3\r\n:1\r\n-inner\r\n+fine\r\n",
            "*3\r\n:1\r\n-inner\r\n+fine\r\n",
        ),
        (
            "return redis.call('type','nokey')",
            "+none\r\n",
            "+none\r\n",
        ),
        (
            "return type(redis.call('get','nokey'))",
            "$7\r\nboolean\r\n",
            "$7\r\nboolean\r\n",
        ),
        (
            "redis.setresp(3) return type(redis.call('get','nokey'))",
            "$3\r\nnil\r\n",
            "$3\r\nnil\r\n",
        ),
        (
            "redis.call('set','n', 0.1) return redis.call('get','n')",
            "$19\r\n0.10000000000000001\r\n",
            "$19\r\n0.10000000000000001\r\n",
        ),
        (
            "redis.call('hset','h','a','1') redis.setresp(3) return redis.call('hgetall','h')",
            "*2\r\n$1\r\na\r\n$1\r\n1\r\n",
            "%1\r\n$1\r\na\r\n$1\r\n1\r\n",
        ),
        (
            "redis.call('hset','h','a','1') local t = redis.call('hgetall','h') return t",
            "*2\r\n$1\r\na\r\n$1\r\n1\r\n",
            "*2\r\n$1\r\na\r\n$1\r\n1\r\n",
        ),
    ];
    for resp in [2, 3] {
        let mut r = Raw::connect(&s).await;
        if resp == 3 {
            cmd!(r, "HELLO", "3");
        }
        for (script, want2, want3) in cases {
            let want = if resp == 2 { want2 } else { want3 };
            assert_eq!(
                String::from_utf8_lossy(&cmd!(r, "EVAL", script, "0")),
                *want,
                "RESP{resp} {script}"
            );
        }
    }
}

#[tokio::test]
async fn bundled_libraries_cjson_bit_struct_cmsgpack() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    let cases: &[(&str, &str)] = &[
        ("return cjson.encode({})", "$2\r\n{}\r\n"),
        ("return cjson.encode({1,2,3,'a',{x=1.5}})", "$21\r\n[1,2,3,\"a\",{\"x\":1.5}]\r\n"),
        ("return cjson.encode(123456789012345)", "$19\r\n1.2345678901234e+14\r\n"),
        ("return cjson.encode({[1]=1,[30]=3})", "-ERR user_script:1: Cannot serialise table: excessively sparse array script: 192b3af9fff8485280fdaa0d9aacd2968bccc465, on @user_script:1.\r\n"),
        ("return cjson.decode('[1,2')", "-ERR user_script:1: Expected comma or array end but found T_END at character 5 script: c107001b5ba2ff860ee2557f64da37c4767ef4bd, on @user_script:1.\r\n"),
        ("return cjson.decode('[1,\"x\",{\"k\":[true]}]')[3].k[1]", ":1\r\n"),
        ("return tostring(cjson.decode('null') == cjson.null)", "$4\r\ntrue\r\n"),
        ("return {bit.band(0xff, 0x0f), bit.lshift(1,31), bit.tohex(-1,-4), bit.tobit(2^32+5)}", "*4\r\n:15\r\n:-2147483648\r\n$4\r\nFFFF\r\n:5\r\n"),
        ("return bit.band('x')", "-ERR user_script:1: bad argument #1 to 'band' (number expected, got string) script: d35c9a1d4f4825ae2c0656c3cb8c9f397ca6d9b1, on @user_script:1.\r\n"),
        ("return {struct.unpack('>I2', struct.pack('>I2', 258))}", "*2\r\n:258\r\n:3\r\n"),
        ("return struct.size('>I2i4bd')", ":15\r\n"),
        ("return {cmsgpack.unpack(cmsgpack.pack('abc', 1, -1, 300, 70000))}", "*5\r\n$3\r\nabc\r\n:1\r\n:-1\r\n:300\r\n:70000\r\n"),
    ];
    for (script, want) in cases {
        assert_eq!(
            String::from_utf8_lossy(&cmd!(r, "EVAL", script, "0")),
            *want,
            "{script}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lua_read_modify_write_is_atomic_against_concurrent_incr() {
    let s = server().await;
    let script = "local v = tonumber(redis.call('get', KEYS[1]) or '0') redis.call('set', KEYS[1], v + 1) return v + 1";
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let mut r = Raw::connect(&s).await;
        tasks.push(tokio::spawn(async move {
            for _ in 0..200 {
                let rep = cmd!(r, "EVAL", script, "1", "counter");
                assert_eq!(rep[0], b':', "{rep:?}");
            }
        }));
    }
    for _ in 0..4 {
        let mut r = Raw::connect(&s).await;
        tasks.push(tokio::spawn(async move {
            for _ in 0..200 {
                let rep = cmd!(r, "INCR", "counter");
                assert_eq!(rep[0], b':', "{rep:?}");
            }
        }));
    }
    for t in tasks {
        tokio::time::timeout(Duration::from_secs(60), t)
            .await
            .expect("in time")
            .expect("task ok");
    }
    let mut r = Raw::connect(&s).await;
    assert_eq!(cmd!(r, "GET", "counter"), b"$4\r\n2400\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn set_nx_px_and_release_script_give_mutual_exclusion() {
    let s = server().await;
    let mut tasks = Vec::new();
    for id in 0..8 {
        let mut r = Raw::connect(&s).await;
        tasks.push(tokio::spawn(async move {
            let deadline = Instant::now() + Duration::from_secs(30);
            let token = format!("client-{id}");
            for _ in 0..20 {
                loop {
                    assert!(Instant::now() < deadline, "lock not acquired in time");
                    if cmd!(r, "SET", "mutex", token, "NX", "PX", "10000") == b"+OK\r\n" {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                assert_eq!(cmd!(r, "INCR", "in_cs"), b":1\r\n");
                tokio::task::yield_now().await;
                assert_eq!(cmd!(r, "DECR", "in_cs"), b":0\r\n");
                cmd!(r, "INCR", "entries");
                assert_eq!(cmd!(r, "EVAL", RELEASE, "1", "mutex", token), b":1\r\n");
            }
        }));
    }
    for t in tasks {
        tokio::time::timeout(Duration::from_secs(60), t)
            .await
            .expect("in time")
            .expect("task ok");
    }
    let mut r = Raw::connect(&s).await;
    assert_eq!(cmd!(r, "GET", "entries"), b"$3\r\n160\r\n");
}

const BUSY: &[u8] =
    b"-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn busy_script_is_killed_by_script_kill() {
    let s = server_with(Config {
        busy_reply_threshold_ms: 100,
        ..Config::ephemeral()
    })
    .await;
    let mut runner = Raw::connect(&s).await;
    let script = "local i = 0 while true do i = i + 1 end";
    runner
        .send(
            format!(
                "*3\r\n$4\r\nEVAL\r\n${}\r\n{script}\r\n$1\r\n0\r\n",
                script.len()
            )
            .as_bytes(),
        )
        .await;
    until_busy(&s).await;
    let mut other = Raw::connect(&s).await;
    assert_eq!(cmd!(other, "GET", "x"), BUSY);
    assert_eq!(cmd!(other, "EVAL", "return 1", "0"), BUSY);
    assert_eq!(cmd!(other, "SCRIPT", "KILL"), b"+OK\r\n");
    assert_eq!(
        runner.reply().await,
        format!(
            "-ERR Script killed by user with SCRIPT KILL... script: {}, on @user_script:1.\r\n",
            sha1(script)
        )
        .into_bytes()
    );
    assert_eq!(cmd!(other, "PING"), b"+PONG\r\n");
    assert_eq!(
        cmd!(other, "SCRIPT", "KILL"),
        b"-NOTBUSY No scripts in execution right now.\r\n"
    );
}

/// Scripts whose time goes into single expensive C calls: string.rep building a megabyte per
/// call (the Lua hook fired once in several seconds there), string.find backtracking over
/// a megabyte (one call that never returns, allocating nothing) and a plain find of a long
/// needle. Each must stop soon after SCRIPT KILL (FUNCTION KILL for the function): the
/// promise is 100 ms; the bound checked here is a generous liveness bound (the first one
/// took about 15 s before), the time taken is printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_stops_scripts_busy_inside_expensive_c_calls() {
    let s = server_with(Config {
        busy_reply_threshold_ms: 100,
        ..Config::ephemeral()
    })
    .await;
    let mut admin = Raw::connect(&s).await;
    let spin = "local s = string.rep('a', 1000000) while true do string.find(s, '.-.-.-b') end";
    let lib = format!("#!lua name=spin\nredis.register_function('spin', function() {spin} end)");
    assert_eq!(cmd!(admin, "FUNCTION", "LOAD", lib), b"$4\r\nspin\r\n");
    let cases: [(&str, bool); 7] = [
        // Each string is garbage at once: a kill served late on a loaded machine must not
        // find gigabytes kept (the test once drove a loaded machine into swapping).
        ("local t for i = 1, 1e9 do t = string.rep('x', 1e6) end", true),
        (spin, true),
        (
            "local p = string.rep('a', 1e5) .. 'b'\nlocal s = string.rep('a', 2e6) while true do string.find(s, p, 1, true) end",
            true,
        ),
        (
            "local t = {} for i = 1, 3e5 do t[i] = tostring(i * 7919 % 3e5) end while true do table.sort(t) end",
            true,
        ),
        (
            "local t = {} for i = 1, 1e6 do t[i] = i end while true do cjson.encode(t) end",
            true,
        ),
        (
            "local c = string.rep('x = 1 ', 3e6) while true do loadstring(c) end",
            true,
        ),
        (spin, false),
    ];
    for (script, eval) in cases {
        let mut runner = Raw::connect(&s).await;
        if eval {
            runner
                .send(
                    format!(
                        "*3\r\n$4\r\nEVAL\r\n${}\r\n{script}\r\n$1\r\n0\r\n",
                        script.len()
                    )
                    .as_bytes(),
                )
                .await;
        } else {
            runner
                .send(b"*3\r\n$5\r\nFCALL\r\n$4\r\nspin\r\n$1\r\n0\r\n")
                .await;
        }
        until_busy(&s).await;
        let kill: &[&[u8]] = if eval {
            &[b"SCRIPT", b"KILL"]
        } else {
            &[b"FUNCTION", b"KILL"]
        };
        let killed = tokio::time::timeout(Duration::from_secs(30), admin.cmd(kill))
            .await
            .expect("the kill is answered");
        assert_eq!(killed, b"+OK\r\n", "{script}");
        let killed_at = Instant::now();
        let reply = tokio::time::timeout(Duration::from_secs(30), runner.reply())
            .await
            .expect("the killed script answers");
        let took = killed_at.elapsed();
        println!("killed in {took:?}: {script}");
        let expected = if eval {
            let line = if script.contains('\n') { 2 } else { 1 };
            format!(
                "-ERR Script killed by user with SCRIPT KILL... script: {}, on @user_script:{line}.\r\n",
                sha1(script)
            )
        } else {
            "-ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:2.\r\n"
                .to_string()
        };
        assert_eq!(String::from_utf8_lossy(&reply), expected);
        assert!(
            took < Duration::from_secs(2),
            "{script}: killed after {took:?}"
        );
        assert_eq!(cmd!(admin, "PING"), b"+PONG\r\n");
    }
}

/// cjson.decode of an array of numbers is linear: each number used to look for the input's
/// end first, which made 100,000 numbers take minutes in a debug build. The bound is a
/// liveness bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cjson_decodes_a_long_array_of_numbers_promptly() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    let started = Instant::now();
    let script = "local t = {} for i = 1, 1e5 do t[i] = i end local d = cjson.decode(cjson.encode(t)) return {#d, d[1], d[100000]}";
    r.send(
        format!(
            "*3\r\n$4\r\nEVAL\r\n${}\r\n{script}\r\n$1\r\n0\r\n",
            script.len()
        )
        .as_bytes(),
    )
    .await;
    assert_eq!(
        r.try_reply(Duration::from_secs(120)).await.as_deref(),
        Some(&b"*3\r\n:100000\r\n:1\r\n:100000\r\n"[..])
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn script_that_wrote_is_unkillable_and_others_wait_for_it() {
    let s = server_with(Config {
        busy_reply_threshold_ms: 100,
        ..Config::ephemeral()
    })
    .await;
    let mut runner = Raw::connect(&s).await;
    // Busy for about 600 ms after a write, then returns.
    let script = "redis.call('set','w','1') local t0 = redis.call('time') local start = t0[1]*1000000 + t0[2] local n = 0 repeat n = n + 1 local t = redis.call('time') until (t[1]*1000000 + t[2]) - start > 600000 return 7";
    let has_time = {
        let mut r = Raw::connect(&s).await;
        cmd!(r, "EVAL", "return redis.call('time')", "0")[0] == b'*'
    };
    let script = if has_time {
        script.to_string()
    } else {
        "redis.call('set','w','1') local i = 0 while i < 60000000 do i = i + 1 end return 7"
            .to_string()
    };
    runner
        .send(
            format!(
                "*3\r\n$4\r\nEVAL\r\n${}\r\n{script}\r\n$1\r\n0\r\n",
                script.len()
            )
            .as_bytes(),
        )
        .await;
    tokio::time::sleep(Duration::from_millis(250)).await;
    let mut other = Raw::connect(&s).await;
    let kill = cmd!(other, "SCRIPT", "KILL");
    if kill != b"-NOTBUSY No scripts in execution right now.\r\n" {
        assert_eq!(kill, b"-UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.\r\n".to_vec());
    }
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(30), runner.reply())
            .await
            .unwrap(),
        b":7\r\n"
    );
    assert_eq!(cmd!(other, "GET", "w"), b"$1\r\n1\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn clients_wait_for_a_short_script_instead_of_busy() {
    let s = server().await;
    let mut runner = Raw::connect(&s).await;
    let script =
        "local i = 0 while i < 3000000 do i = i + 1 end redis.call('set','k','done') return i";
    runner
        .send(
            format!(
                "*3\r\n$4\r\nEVAL\r\n${}\r\n{script}\r\n$1\r\n0\r\n",
                script.len()
            )
            .as_bytes(),
        )
        .await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    let mut other = Raw::connect(&s).await;
    let got = cmd!(other, "GET", "k");
    assert!(got == b"$4\r\ndone\r\n" || got == b"$-1\r\n", "{got:?}");
    assert_eq!(runner.reply().await, b":3000000\r\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_hungry_script_gets_an_error_and_server_keeps_serving() {
    let s = server().await;
    s.state().scripting.set_memory_limit(64 << 20);
    let mut r = Raw::connect(&s).await;
    for script in [
        "local s = 'x' while true do s = s .. s end",
        "local t = {} local i = 0 while true do i = i + 1 t[i] = string.rep('y', 100) .. i end",
    ] {
        // A debug build on a loaded machine may need more than cmd!'s 5 s to hit the limit.
        let req = format!(
            "*3\r\n$4\r\nEVAL\r\n${}\r\n{script}\r\n$1\r\n0\r\n",
            script.len()
        );
        r.send(req.as_bytes()).await;
        let rep = r
            .try_reply(Duration::from_secs(60))
            .await
            .expect("script ends");
        let text = String::from_utf8_lossy(&rep).to_string();
        assert!(
            text.starts_with("-ERR ") && text.contains("not enough memory"),
            "{text}"
        );
        assert_eq!(cmd!(r, "PING"), b"+PONG\r\n");
        assert_eq!(cmd!(r, "EVAL", "return 1", "0"), b":1\r\n");
    }
}

/// Replies are pushed into Lua under protection: running out of script memory while a big
/// `redis.call` reply is converted fails the script, not the server, and leaks nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_call_replies_that_exhaust_script_memory_fail_the_script_only() {
    let s = server().await;
    s.state().scripting.set_memory_limit(8 << 20);
    let mut r = Raw::connect(&s).await;
    let fill = "return redis.call('set', KEYS[1], string.rep('x', 1000000))";
    assert_eq!(cmd!(r, "EVAL", fill, "1", "big"), b"+OK\r\n");
    // Each GET answers a new 1 MB string (Lua interns strings, so equal ones would not add up).
    let hog = "local t = {} for i = 1, 100 do redis.call('append', KEYS[1], 'y') t[i] = redis.call('get', KEYS[1]) end return #t";
    for _ in 0..3 {
        let rep = cmd!(r, "EVAL", hog, "1", "big");
        let text = String::from_utf8_lossy(&rep).to_string();
        assert!(
            text.starts_with("-ERR ") && text.contains("not enough memory"),
            "{text}"
        );
    }
    // A pcall'd failure is a value the script can look at, then the script goes on.
    let caught = "local ok = pcall(function() local t = {} for i = 1, 100 do redis.call('append', KEYS[1], 'y') t[i] = redis.call('get', KEYS[1]) end end) return tostring(ok)";
    assert_eq!(cmd!(r, "EVAL", caught, "1", "big"), b"$5\r\nfalse\r\n");
    // Writes made before the failure stay (scripts do not roll back), and the value reads
    // back whole through the script path.
    let len = cmd!(r, "STRLEN", "big");
    assert!(len.len() > 9 && len.starts_with(b":100"), "{len:?}");
    assert_eq!(
        cmd!(r, "EVAL", "return #redis.call('get', KEYS[1])", "1", "big"),
        len
    );
}

#[tokio::test]
async fn script_time_and_select_stay_inside_the_script() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    assert_eq!(
        cmd!(
            r,
            "EVAL",
            "redis.call('select', 1) redis.call('set','k','in1') return 1",
            "0"
        ),
        b":1\r\n"
    );
    assert_eq!(cmd!(r, "GET", "k"), b"$-1\r\n");
    assert_eq!(cmd!(r, "SELECT", "1"), b"+OK\r\n");
    assert_eq!(cmd!(r, "GET", "k"), b"$3\r\nin1\r\n");
    // A key set to expire in 1 ms within the script is still there later in the same script.
    assert_eq!(
        cmd!(r, "EVAL", "redis.call('set','e','v','PX','1') local i = 0 while i < 2000000 do i = i + 1 end return redis.call('get','e')", "0"),
        b"$1\r\nv\r\n"
    );
}

/// Library errors use luaL_argerror's wording (the function named as the caller called it),
/// struct's integral sizes go up to 32 bytes, cmsgpack has unpack_one/unpack_limit, and
/// math.random is Redis's lrand48-based one; every reply recorded from redis-server 7.0.15.
#[tokio::test]
async fn library_argument_errors_struct_sizes_msgpack_streaming_and_random() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    let cases: &[(&str, &[u8])] = &[
        ("return struct.pack('q', 1)", b"-ERR user_script:1: bad argument #1 to 'pack' (invalid format option 'q') script: 49599a2466f241bd45a2bd4f631df3a1a1ec9790, on @user_script:1.\r\n"),
        ("return struct.pack('i17', 1)", b"$17\r\n\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\r\n"),
        ("return struct.pack('>i17', -2)", b"$17\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xfe\r\n"),
        ("return {struct.unpack('>i17', struct.pack('>i17', -300))}", b"*2\r\n:-44\r\n:18\r\n"),
        ("return {struct.unpack('i9', string.rep('\\255',9))}", b"*2\r\n:-1\r\n:10\r\n"),
        ("return struct.pack('i33', 1)", b"-ERR user_script:1: integral size 33 is larger than limit of 32 script: 0a76c071d82805e752befa6958961c98c39f358f, on @user_script:1.\r\n"),
        ("return struct.pack('!4bi', 1, 2)", b"$8\r\n\x01\x00\x00\x00\x02\x00\x00\x00\r\n"),
        ("return struct.size('!4bi')", b":8\r\n"),
        ("return struct.size('s')", b"-ERR user_script:1: bad argument #1 to 'size' (option 's' has no fixed size) script: a2a0525826ab7939ccd3f54427a862205642f28f, on @user_script:1.\r\n"),
        ("return struct.pack('c3', 'ab')", b"-ERR user_script:1: bad argument #3 to 'pack' (string too short) script: 01dc5ae2857747fc1262e064540dfbc33d3ccf21, on @user_script:1.\r\n"),
        ("return {struct.unpack('bc0', '\\2abc')}", b"*2\r\n$2\r\nab\r\n:4\r\n"),
        ("return struct.unpack('i', 'abcd', 0)", b"-ERR user_script:1: bad argument #3 to 'unpack' (offset must be 1 or greater) script: 136d17dc2e5c23430c74865741f12a14ece019d4, on @user_script:1.\r\n"),
        ("local p = struct.pack return p('q')", b"-ERR user_script:1: bad argument #1 to 'p' (invalid format option 'q') script: 380eb44a226b5ef2cc4eb1d0ed4e5224879f23e5, on @user_script:1.\r\n"),
        ("return {cmsgpack.unpack_one(cmsgpack.pack(7, 8))}", b"*2\r\n:1\r\n:7\r\n"),
        ("return {cmsgpack.unpack_one(cmsgpack.pack(7, 8), 1)}", b"*2\r\n:-1\r\n:8\r\n"),
        ("return {cmsgpack.unpack_one(cmsgpack.pack(7, 8), 3)}", b"-ERR user_script:1: Start offset 3 greater than input length 2. script: 0cb4ae459b9c18b72ccb93528d0a67e3f2113822, on @user_script:1.\r\n"),
        ("return {cmsgpack.unpack_limit(cmsgpack.pack(7, 8, 9), 2)}", b"*3\r\n:2\r\n:7\r\n:8\r\n"),
        ("return {cmsgpack.unpack_limit(cmsgpack.pack(7, 8, 9), 0)}", b"*3\r\n:7\r\n:8\r\n:9\r\n"),
        ("return {cmsgpack.unpack_limit(cmsgpack.pack(7, 8, 9), -1)}", b"-ERR user_script:1: Invalid request to unpack with offset of 0 and limit of 3. script: 97995c3561d4c548f689fb5245c0f60a2890b735, on @user_script:1.\r\n"),
        ("return {cmsgpack.unpack('\\193')}", b"-ERR user_script:1: Bad data format in input. script: 4370c4369e4c339c56b8ad64adc652c10d7953b5, on @user_script:1.\r\n"),
        ("return {cmsgpack.unpack('\\129\\192\\1')}", b"-ERR table index is nil script: b57640c96e3674704b8e4c9127630b3cf5524843, on @user_script:1.\r\n"),
        ("return cmsgpack.pack()", b"-ERR user_script:1: bad argument #0 to 'pack' (MessagePack pack needs input.) script: 6bc235afa55de88253e203cc5fe5844792e25209, on @user_script:1.\r\n"),
        ("return cjson.decode({})", b"-ERR user_script:1: bad argument #1 to 'decode' (string expected, got table) script: 10c706d54b3ae7d2bcc169d647405abd961145fa, on @user_script:1.\r\n"),
        ("local e = cjson.encode return e(1, 2)", b"-ERR user_script:1: bad argument #1 to 'e' (expected 1 argument) script: 6c9bf700d4c43df726d36ea2e78e56b4d127ab68, on @user_script:1.\r\n"),
        ("return bit.tohex()", b"-ERR user_script:1: bad argument #1 to 'tohex' (number expected, got no value) script: bbebe1b19aaebf97fcec4b5510d6e6a9817e9192, on @user_script:1.\r\n"),
        ("return math.random(0)", b"-ERR user_script:1: bad argument #1 to 'random' (interval is empty) script: 008bcb60f86ee36d26c67b641b46674578d9cba0, on @user_script:1.\r\n"),
        ("return math.random(5, 3)", b"-ERR user_script:1: bad argument #2 to 'random' (interval is empty) script: d153eca7da9e7730d6cdd25a757b129d4af405a6, on @user_script:1.\r\n"),
        ("return math.random(1, 2, 3)", b"-ERR user_script:1: wrong number of arguments script: 07d2fd85ff1e5c39f9bd7d9163eddb0db34f2a7a, on @user_script:1.\r\n"),
        ("math.randomseed(42) return {math.random(1000000), math.random(10, 20), tostring(math.random())}", b"*3\r\n:744526\r\n:13\r\n$16\r\n0.11108528222474\r\n"),
        ("math.randomseed(4294967297) return math.random(1000000)", b":41631\r\n"),
        ("#!lua flags=no-writes\nreturn redis.call('PUBLISH', 'ch', 'm')", b"-ERR Write commands are not allowed from read-only scripts. script: 5a4606b1538369aac82ea599a832ece7fcfa2f89, on @user_script:2.\r\n"),
        ("return redis.pcall('PUBLISH', 'ch', 'm')", b":0\r\n"),
    ];
    for (script, want) in cases {
        assert_eq!(
            String::from_utf8_lossy(&cmd!(r, "EVAL", script, "0")),
            String::from_utf8_lossy(want),
            "{script}"
        );
    }
}

/// redisLrand48 starts from 0x1234ABCD330E, is not reseeded per script and survives SCRIPT
/// FLUSH, as Redis's process-wide state.
#[tokio::test]
async fn math_random_sequence_is_redis_and_not_reseeded_per_script() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    let script = "return math.random(1000000)";
    assert_eq!(cmd!(r, "EVAL", script, "0"), b":396465\r\n");
    assert_eq!(cmd!(r, "EVAL", script, "0"), b":840486\r\n");
    assert_eq!(
        cmd!(
            r,
            "EVAL",
            "math.randomseed(42) return math.random(1000000)",
            "0"
        ),
        b":744526\r\n"
    );
    assert_eq!(cmd!(r, "SCRIPT", "FLUSH"), b"+OK\r\n");
    assert_eq!(cmd!(r, "EVAL", script, "0"), b":342702\r\n");
}

/// PUBLISH may replicate, so read-only scripts (EVAL_RO, `no-writes`) may not call it.
#[tokio::test]
async fn read_only_scripts_refuse_publish() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    assert_eq!(
        cmd!(r, "EVAL_RO", "return redis.call('PUBLISH', 'ch', 'm')", "0"),
        b"-ERR Write commands are not allowed from read-only scripts. script: c379b780589e7752cfac1ef40d7ef8633253a3fe, on @user_script:1.\r\n"
    );
    assert_eq!(
        cmd!(
            r,
            "EVAL_RO",
            "return redis.pcall('SPUBLISH', 'ch', 'm')",
            "0"
        ),
        b"-ERR Write commands are not allowed from read-only scripts.\r\n"
    );
}

#[tokio::test]
async fn a_call_a_script_refuses_counts_as_a_rejected_call_of_that_command() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    assert_eq!(
        cmd!(r, "ACL", "SETUSER", "u", "on", "nopass", "~*", "+eval", "+get"),
        b"+OK\r\n"
    );
    for script in [
        "return redis.call('get')",
        "return redis.call('command','getkeys')",
        "return redis.call('multi')",
    ] {
        assert!(eval(&mut r, script, &[], &[]).await.starts_with(b"-ERR "));
    }
    assert_eq!(cmd!(r, "AUTH", "u", "x"), b"+OK\r\n");
    assert!(eval(&mut r, "return redis.call('set','k','v')", &[], &[])
        .await
        .starts_with(b"-ERR "));
    assert_eq!(cmd!(r, "AUTH", "default", "x"), b"+OK\r\n");
    let info = String::from_utf8(cmd!(r, "INFO", "commandstats")).unwrap();
    for name in ["get", "command|getkeys", "multi", "set"] {
        let line = info
            .lines()
            .find(|l| l.starts_with(&format!("cmdstat_{name}:")))
            .unwrap_or_else(|| panic!("{name} in {info}"));
        assert!(
            line.starts_with(&format!("cmdstat_{name}:calls=0,")),
            "{line}"
        );
        assert!(line.contains(",rejected_calls=1,"), "{line}");
    }
}

/// SCRIPT DEBUG SYNC then EVAL: the session's stops, logs and the debugger's answers over the
/// client's own connection, byte for byte as redis-server 7.0 sends them (recorded in
/// conformance/scripting_debug.case too), then `<endsession>`, EVAL's reply and the close.
#[tokio::test]
async fn debugger_session_steps_logs_redis_calls_and_ends_with_the_reply() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    assert_eq!(cmd!(r, "SCRIPT", "DEBUG", "SYNC"), b"+OK\r\n");
    let script = "local a = 1\nredis.call('set', KEYS[1], ARGV[1])\nredis.debug('v', a, {1,'x'})\nreturn redis.call('get', KEYS[1])\n";
    assert_eq!(
        cmd!(r, "EVAL", script, "1", "k", "val"),
        b"*2\r\n+* Stopped at 1, stop reason = step over\r\n+-> 1   local a = 1\r\n"
    );
    assert_eq!(
        cmd!(r, "s"),
        b"*2\r\n+* Stopped at 2, stop reason = step over\r\n+-> 2   redis.call('set', KEYS[1], ARGV[1])\r\n"
    );
    assert_eq!(cmd!(r, "p", "a"), b"*1\r\n+<value> 1\r\n");
    assert_eq!(cmd!(r, "p", "ARGV"), b"*1\r\n+<value> {\"val\"}\r\n");
    assert_eq!(
        cmd!(r, "b", "4"),
        b"*2\r\n+   3   redis.debug('v', a, {1,'x'})\r\n+  #4   return redis.call('get', KEYS[1])\r\n"
    );
    assert_eq!(
        cmd!(r, "nonsense"),
        b"*1\r\n+<error> Unknown Redis Lua debugger command or wrong number of arguments.\r\n"
    );
    // `eval` runs in a frame of its own: the script's locals are not visible there.
    assert_eq!(
        cmd!(r, "e", "redis.call('ping')['ok']"),
        b"*1\r\n+<retval> \"PONG\"\r\n"
    );
    assert_eq!(
        cmd!(r, "s"),
        b"*4\r\n+<redis> set k val\r\n+<reply> \"+OK\"\r\n+* Stopped at 3, stop reason = step over\r\n+-> 3   redis.debug('v', a, {1,'x'})\r\n"
    );
    assert_eq!(
        cmd!(r, "c"),
        b"*3\r\n+<debug> line 3: \"v\", 1, {1; \"x\"}\r\n+* Stopped at 4, stop reason = break point\r\n+->#4   return redis.call('get', KEYS[1])\r\n"
    );
    assert_eq!(
        cmd!(r, "r", "incr", "k"),
        b"*3\r\n+<redis> incr k\r\n+<error> -ERR value is not an integer or out of range\r\n+<reply> \"-ERR value is not an integer or out of range\"\r\n"
    );
    assert_eq!(cmd!(r, "c"), b"*1\r\n+<endsession>\r\n");
    assert_eq!(r.reply().await, b"$3\r\nval\r\n");
    assert!(r.closed(Duration::from_secs(2)).await);
    // SYNC keeps what the script wrote.
    let mut other = Raw::connect(&s).await;
    assert_eq!(cmd!(other, "GET", "k"), b"$3\r\nval\r\n");
}

/// `abort` stops the script with Redis's error, and a client that leaves mid-session lets the
/// script run to its end without stops (its writes done), as ldbRepl does.
#[tokio::test]
async fn debugger_abort_fails_the_script_and_a_departed_client_lets_it_finish() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    cmd!(r, "SCRIPT", "DEBUG", "SYNC");
    cmd!(r, "EVAL", "redis.call('set','a','1')\nreturn 1", "0");
    assert_eq!(
        cmd!(r, "s"),
        b"*4\r\n+<redis> set a 1\r\n+<reply> \"+OK\"\r\n+* Stopped at 2, stop reason = step over\r\n+-> 2   return 1\r\n"
    );
    assert_eq!(cmd!(r, "abort"), b"*1\r\n+<endsession>\r\n");
    let sha = sha1("redis.call('set','a','1')\nreturn 1");
    assert_eq!(
        r.reply().await,
        format!("-ERR script aborted for user request script: {sha}, on @user_script:2.\r\n")
            .into_bytes()
    );
    assert!(r.closed(Duration::from_secs(2)).await);

    let mut r = Raw::connect(&s).await;
    cmd!(r, "SCRIPT", "DEBUG", "SYNC");
    assert!(cmd!(
        r,
        "EVAL",
        "local x = 1\nredis.call('set','b','2')\nreturn x",
        "0"
    )
    .starts_with(b"*2\r\n+* Stopped at 1"));
    drop(r);
    let mut other = Raw::connect(&s).await;
    assert_eq!(cmd!(other, "GET", "b"), b"$1\r\n2\r\n");
    assert_eq!(cmd!(other, "GET", "a"), b"$1\r\n1\r\n");
}

/// A synchronous session blocks the server as Redis's does: other clients get no BUSY
/// while it waits for the debugger's commands, and are served once it ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debugger_session_holds_other_clients_without_busy_until_it_ends() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    let mut other = Raw::connect(&s).await;
    assert_eq!(
        cmd!(other, "CONFIG", "SET", "busy-reply-threshold", "20"),
        b"+OK\r\n"
    );
    cmd!(r, "SCRIPT", "DEBUG", "SYNC");
    cmd!(r, "EVAL", "return 1", "0");
    other.send(b"*1\r\n$4\r\nPING\r\n").await;
    assert_eq!(other.try_reply(Duration::from_millis(300)).await, None);
    let mut kill = Raw::connect(&s).await;
    assert_eq!(
        cmd!(kill, "SCRIPT", "KILL"),
        b"-NOTBUSY No scripts in execution right now.\r\n"
    );
    assert_eq!(cmd!(r, "c"), b"*1\r\n+<endsession>\r\n");
    assert_eq!(r.reply().await, b":1\r\n");
    assert_eq!(other.reply().await, b"+PONG\r\n");
}

/// Scripts may call DEBUG (and the other commands refused from scripts) only while
/// DEBUG SET-DISABLE-DENY-SCRIPTS 1 is in force.
#[tokio::test]
async fn scripts_call_noscript_commands_only_after_set_disable_deny_scripts() {
    let mut c = Config::ephemeral();
    c.enable_debug_command = resplock::config::ProtectedAction::Local;
    let s = server_with(c).await;
    let mut r = Raw::connect(&s).await;
    let script = "return redis.call('debug', 'protocol', 'bignum')";
    let refused = cmd!(r, "EVAL", script, "0");
    assert!(
        refused.starts_with(b"-ERR This Redis command is not allowed from script"),
        "{}",
        String::from_utf8_lossy(&refused)
    );
    assert_eq!(
        cmd!(r, "DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1"),
        b"+OK\r\n"
    );
    assert_eq!(
        cmd!(r, "EVAL", script, "0"),
        b"$37\r\n1234567999999999999999999999999999999\r\n"
    );
    assert_eq!(
        cmd!(r, "DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0"),
        b"+OK\r\n"
    );
    assert!(cmd!(r, "EVAL", script, "0").starts_with(b"-ERR This Redis command"));
}

/// A command a script's `redis.call`/`redis.pcall` runs or is refused counts in INFO
/// errorstats once, where it failed: a caught error still counts, and the script's error
/// reply raised from it does not count again (unit/scripting's "Consistent eval error
/// reporting").
#[tokio::test]
async fn script_call_errors_count_once_in_errorstats_caught_or_raised() {
    let s = server().await;
    let mut r = Raw::connect(&s).await;
    let stats = |info: Vec<u8>| {
        let info = String::from_utf8(info).unwrap();
        let err = info_field(info.as_bytes(), "errorstat_ERR");
        let total = info_field(info.as_bytes(), "total_error_replies");
        (err, total)
    };
    cmd!(r, "CONFIG", "RESETSTAT");
    assert_eq!(
        cmd!(
            r,
            "EVAL",
            "local t = redis.pcall('select', 99) return 1",
            "0"
        ),
        b":1\r\n"
    );
    let (err, _) = stats(cmd!(r, "INFO", "errorstats"));
    assert_eq!(err.as_deref(), Some("count=1"));
    cmd!(r, "CONFIG", "RESETSTAT");
    assert!(cmd!(r, "EVAL", "return redis.call('select', 99)", "0").starts_with(b"-ERR DB index"));
    assert!(cmd!(r, "EVAL", "return redis.pcall('nosuchcmd')", "0").starts_with(b"-ERR Unknown"));
    let (err, _) = stats(cmd!(r, "INFO", "errorstats"));
    assert_eq!(err.as_deref(), Some("count=2"));
    let (_, total) = stats(cmd!(r, "INFO", "stats"));
    assert_eq!(total.as_deref(), Some("2"));
}
