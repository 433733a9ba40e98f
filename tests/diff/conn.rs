//! A raw connection to either server: send a command, read frames with a deadline, notice a
//! closed connection.

use super::resp::frame_len;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// What reading a frame gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Got {
    Frame(Vec<u8>),
    /// Nothing within the wait.
    Nothing,
    /// The server closed the connection (what it sent before is in earlier frames).
    Closed,
}

pub struct Conn {
    pub addr: SocketAddr,
    stream: Option<TcpStream>,
    buf: Vec<u8>,
}

impl Conn {
    pub async fn open(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr)
            .await
            .unwrap_or_else(|e| panic!("connect {addr}: {e}"));
        stream.set_nodelay(true).unwrap();
        Conn {
            addr,
            stream: Some(stream),
            buf: Vec::new(),
        }
    }

    pub fn is_closed(&self) -> bool {
        self.stream.is_none()
    }

    pub async fn send(&mut self, args: &[Vec<u8>]) {
        let args: Vec<&[u8]> = args.iter().map(|a| &a[..]).collect();
        let req = crate::common::request(&args);
        self.send_raw(&req).await;
    }

    pub async fn send_raw(&mut self, req: &[u8]) {
        if let Some(s) = self.stream.as_mut() {
            if s.write_all(req).await.is_err() {
                self.stream = None;
            }
        }
    }

    /// The next frame within `wait`.
    pub async fn frame(&mut self, wait: Duration) -> Got {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(n) = frame_len(&self.buf) {
                return Got::Frame(self.buf.drain(..n).collect());
            }
            let Some(s) = self.stream.as_mut() else {
                return Got::Closed;
            };
            self.buf.reserve(65536);
            match tokio::time::timeout_at(deadline, s.read_buf(&mut self.buf)).await {
                Ok(Ok(0)) | Ok(Err(_)) => {
                    self.stream = None;
                    return Got::Closed;
                }
                Err(_) => return Got::Nothing,
                Ok(Ok(_)) => {}
            }
        }
    }

    /// The next frame, or a description of why there is none (after `wait`).
    pub async fn reply_within(&mut self, wait: Duration) -> Vec<u8> {
        match self.frame(wait).await {
            Got::Frame(f) => f,
            Got::Nothing => b"<no reply>".to_vec(),
            Got::Closed => b"<connection closed>".to_vec(),
        }
    }

    pub async fn reply(&mut self) -> Vec<u8> {
        self.reply_within(Duration::from_secs(5)).await
    }

    pub async fn call(&mut self, args: &[Vec<u8>]) -> Vec<u8> {
        self.send(args).await;
        self.reply().await
    }

    /// `call` with string arguments.
    pub async fn cmd(&mut self, args: &[&str]) -> Vec<u8> {
        let a: Vec<Vec<u8>> = args.iter().map(|s| s.as_bytes().to_vec()).collect();
        self.call(&a).await
    }
}
