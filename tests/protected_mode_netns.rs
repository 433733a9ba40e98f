//! Protected mode seen from a real remote address: the test creates a network namespace and a
//! veth pair (removed again when it ends), starts resplock and redis-server 7.0.15 on the
//! host side's address, and runs `redis-cli PING` from inside the namespace against both.
//! The replies must be the same. Skipped, with the reason printed, where `ip netns` is not
//! permitted or redis-server/redis-cli are missing.

use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The namespace and veth pair, deleted on drop (the host end goes with its peer).
struct Netns {
    name: String,
    host_ip: String,
}

impl Netns {
    fn create() -> Result<Netns, String> {
        let pid = std::process::id();
        let name = format!("rlpm{pid}");
        let host_if = format!("rlh{}", pid % 100_000);
        let ns_if = format!("rln{}", pid % 100_000);
        let net = 16 + (pid % 200);
        let host_ip = format!("10.213.{net}.1");
        let ns_ip = format!("10.213.{net}.2");
        let ns = Netns {
            name: name.clone(),
            host_ip: host_ip.clone(),
        };
        let steps: Vec<Vec<String>> = vec![
            vec!["netns".into(), "add".into(), name.clone()],
            vec![
                "link".into(),
                "add".into(),
                host_if.clone(),
                "type".into(),
                "veth".into(),
                "peer".into(),
                "name".into(),
                ns_if.clone(),
            ],
            vec![
                "link".into(),
                "set".into(),
                ns_if.clone(),
                "netns".into(),
                name.clone(),
            ],
            vec![
                "addr".into(),
                "add".into(),
                format!("{host_ip}/24"),
                "dev".into(),
                host_if.clone(),
            ],
            vec!["link".into(), "set".into(), host_if.clone(), "up".into()],
            vec![
                "-n".into(),
                name.clone(),
                "addr".into(),
                "add".into(),
                format!("{ns_ip}/24"),
                "dev".into(),
                ns_if.clone(),
            ],
            vec![
                "-n".into(),
                name.clone(),
                "link".into(),
                "set".into(),
                ns_if,
                "up".into(),
            ],
        ];
        for args in steps {
            let out = Command::new("ip")
                .args(&args)
                .output()
                .map_err(|e| format!("ip: {e}"))?;
            if !out.status.success() {
                let _ = Command::new("ip").args(["link", "del", &host_if]).output();
                return Err(format!(
                    "ip {}: {}",
                    args.join(" "),
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
        }
        Ok(ns)
    }

    /// `redis-cli -h host_ip -p port PING` run inside the namespace: its output.
    fn ping(&self, port: u16) -> String {
        let out = Command::new("ip")
            .args(["netns", "exec", &self.name, "timeout", "10", "redis-cli"])
            .args(["-h", &self.host_ip, "-p", &port.to_string(), "PING"])
            .output()
            .expect("ip netns exec");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .output();
    }
}

/// A server process killed on drop.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(bin: &str, ip: &str, port: u16, extra: &[&str]) -> Proc {
    let child = Command::new(bin)
        .args(["--bind", ip, "--port", &port.to_string(), "--save", ""])
        .args(["--appendonly", "no"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start server");
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect((ip, port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "{bin} did not listen on {ip}:{port}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Proc(child)
}

fn available(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn protected_mode_denies_a_remote_client_as_redis_server_does() {
    if !available("redis-server") || !available("redis-cli") {
        println!("skipped: redis-server or redis-cli not installed");
        return;
    }
    let ns = match Netns::create() {
        Ok(ns) => ns,
        Err(e) => {
            println!("skipped: cannot create a network namespace here ({e})");
            return;
        }
    };
    let resplock = env!("CARGO_BIN_EXE_resplock");
    // Ports from this test's range (8040-8049), resplock's and redis-server's side by side.
    let cases: [(&[&str], u16); 3] = [
        (&[], 8040),
        (&["--protected-mode", "no"], 8042),
        (&["--requirepass", "pw"], 8044),
    ];
    for (extra, port) in cases {
        let _redis = start("redis-server", &ns.host_ip, port, extra);
        let _ours = start(resplock, &ns.host_ip, port + 1, extra);
        let expected = ns.ping(port);
        let got = ns.ping(port + 1);
        assert_eq!(got, expected, "options {extra:?}");
        match extra.first() {
            None => assert!(
                expected.starts_with("DENIED Redis is running in protected mode")
                    || expected.contains("DENIED Redis is running in protected mode")
            ),
            Some(&"--protected-mode") => assert_eq!(expected, "PONG\n"),
            _ => assert!(expected.contains("NOAUTH"), "{expected}"),
        }
    }
}
