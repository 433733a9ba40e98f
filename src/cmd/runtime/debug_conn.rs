//! The Lua debugger's use of a client's socket (Redis's `connBlock` on the debugging client):
//! while SCRIPT DEBUG's session runs, the script's thread reads the client's debugger
//! commands and writes its logs on the socket itself, with `poll` and non-blocking calls on
//! the descriptor the connection task lent (that task waits for the script meanwhile, so
//! the descriptor stays open and nobody else reads it).

use crate::script::{DebugConn, DebugRead};
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// How long a write to the debugging client may wait (Redis's 5 s send timeout).
const SEND_TIMEOUT: Duration = Duration::from_secs(5);

/// A client's socket, by descriptor.
pub struct FdConn(pub RawFd);

/// `poll` one descriptor for `events`, at most `wait`: whether it is ready (or in error).
fn ready(fd: RawFd, events: i16, wait: Duration) -> Result<bool, ()> {
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    let ms = wait.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: one valid pollfd.
    let r = unsafe { libc::poll(&mut p, 1, ms) };
    if r < 0 {
        let e = std::io::Error::last_os_error();
        return if e.kind() == std::io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(())
        };
    }
    Ok(r > 0)
}

fn would_block() -> bool {
    matches!(
        std::io::Error::last_os_error().kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
    )
}

impl DebugConn for FdConn {
    fn read(&mut self, buf: &mut [u8], wait: Duration) -> DebugRead {
        match ready(self.0, libc::POLLIN, wait) {
            Err(()) => return DebugRead::Closed,
            Ok(false) => return DebugRead::Idle,
            Ok(true) => {}
        }
        // SAFETY: `buf` is writable for its length; the descriptor is the client's socket.
        let n = unsafe { libc::recv(self.0, buf.as_mut_ptr() as *mut _, buf.len(), 0) };
        if n > 0 {
            DebugRead::Data(n as usize)
        } else if n < 0 && would_block() {
            DebugRead::Idle
        } else {
            DebugRead::Closed
        }
    }

    fn write(&mut self, mut data: &[u8]) {
        let deadline = Instant::now() + SEND_TIMEOUT;
        while !data.is_empty() {
            // SAFETY: `data` is readable for its length; MSG_NOSIGNAL: no SIGPIPE.
            let n = unsafe {
                libc::send(
                    self.0,
                    data.as_ptr() as *const _,
                    data.len(),
                    libc::MSG_NOSIGNAL,
                )
            };
            if n > 0 {
                data = &data[n as usize..];
                continue;
            }
            if n < 0 && would_block() {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() || ready(self.0, libc::POLLOUT, left).is_err() {
                    return;
                }
                continue;
            }
            return;
        }
    }
}
