//! A redis-server of the tester's own, on a free port with a scratch directory: modes that
//! change users, configuration or the aclfile never disturb a server other tests share.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static NEXT: AtomicUsize = AtomicUsize::new(0);

pub struct OwnRedis {
    child: std::process::Child,
    pub addr: SocketAddr,
    pub dir: std::path::PathBuf,
}

impl OwnRedis {
    pub fn start() -> Option<OwnRedis> {
        Self::start_with(&[], |_| {})
    }

    /// Started with `args` after the defaults (`{dir}` in one stands for its directory);
    /// `prepare` may write files into that directory first (an aclfile).
    pub fn start_with(args: &[&str], prepare: impl FnOnce(&std::path::Path)) -> Option<OwnRedis> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("resplock-diff-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        prepare(&dir);
        let child = std::process::Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
            ])
            .args(["--appendonly", "no", "--dir"])
            .arg(&dir)
            .arg("--logfile")
            .arg(dir.join("redis.log"))
            .args(
                args.iter()
                    .map(|a| a.replace("{dir}", &dir.to_string_lossy())),
            )
            .stdout(std::process::Stdio::null())
            .spawn()
            .ok()?;
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().ok()?;
        let mut me = OwnRedis { child, addr, dir };
        let until = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(addr).is_err() {
            if let Some(why) = me.died() {
                println!("{why}");
                return None;
            }
            if Instant::now() > until {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(me)
    }
}

impl OwnRedis {
    /// The end of its log, if it stopped on its own (for a failure message).
    pub fn died(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => {
                let log = std::fs::read_to_string(self.dir.join("redis.log")).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(30).collect();
                Some(format!(
                    "redis-server exited ({status}):\n{}",
                    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                ))
            }
            _ => None,
        }
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        if let Some(d) = self.died() {
            println!("{d}");
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
