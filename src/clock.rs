//! The one source of server time. Expiry, TIME, scripts, blocking timeouts, idle times and
//! the slow log read it through [`Clock`], so a test (or the hermetic mode's
//! `RESPLOCK.CLOCK`) can move time without sleeping: advance it, set it to an absolute
//! instant, freeze it and resume it. What must stay on real time (the script time limit,
//! busy-reply-threshold, so a frozen clock never disables BUSY) reads `std::time::Instant`.

use parking_lot::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::Notify;

/// `frozen_us` when the clock runs.
const RUNNING: i64 = i64::MIN;

/// A wall clock that tests can move. Reads are two relaxed atomic loads on top of the
/// system clock; changes are serialized and wake [`Clock::sleep_until`] sleepers.
///
/// ```
/// let clock = resplock::Clock::new();
/// clock.freeze();
/// let t = clock.now_ms();
/// clock.advance_ms(1_500);
/// assert_eq!(clock.now_ms(), t + 1_500);
/// clock.set_ms(1_000_000);
/// assert_eq!(clock.now_ms(), 1_000_000);
/// clock.resume(); // runs again from 1_000_000
/// assert!(clock.now_ms() >= 1_000_000);
/// ```
#[derive(Debug)]
pub struct Clock {
    /// Added to the system clock while the clock runs, in microseconds.
    offset_us: AtomicI64,
    /// The time the clock stands at while frozen (µs since the epoch), or [`RUNNING`].
    frozen_us: AtomicI64,
    /// Serializes changes, so two moves never lose one another's offset.
    change: Mutex<()>,
    /// Wakes [`Clock::sleep_until`] sleepers (and whoever else listens, the active expirer)
    /// when the clock is moved, so a deadline the move passed fires without waiting for real
    /// time to catch up.
    moved: Notify,
    /// The system time of a recent read (µs, stored at most once a millisecond):
    /// [`Clock::recent_ms`] without a read. On a line of its own, so its stores do not evict
    /// the fields every reader loads.
    last_system_us: Padded,
}

#[derive(Debug)]
#[repr(align(64))]
struct Padded(AtomicI64);

impl Default for Clock {
    fn default() -> Self {
        Clock {
            offset_us: AtomicI64::new(0),
            frozen_us: AtomicI64::new(RUNNING),
            change: Mutex::new(()),
            moved: Notify::new(),
            last_system_us: Padded(AtomicI64::new(system_us())),
        }
    }
}

/// The system time, µs since the epoch (CLOCK_REALTIME, as Redis's ustime). Command timing
/// reads it once and takes both the command's server time ([`Clock::at_us`]) and the start
/// of its duration from that one read. Where the kernel keeps time by the TSC, it is read
/// from the TSC between real reads (see [`tsc`]).
pub(crate) fn system_us() -> i64 {
    #[cfg(target_arch = "x86_64")]
    if let Some(ns) = tsc::now_ns(&tsc::REAL, real_ns) {
        return ns.div_euclid(1000);
    }
    real_ns().div_euclid(1000)
}

/// Monotonic time in nanoseconds from an arbitrary origin (CLOCK_MONOTONIC, as `Instant`):
/// what durations that must not follow the wall clock (a script's run time, for the watchdog
/// and commandstats) are measured with, at the cost of [`system_us`].
pub(crate) fn mono_ns() -> i64 {
    #[cfg(target_arch = "x86_64")]
    if let Some(ns) = tsc::now_ns(&tsc::MONO, kernel_mono_ns) {
        return ns;
    }
    kernel_mono_ns()
}

/// The time from `start` (a [`mono_ns`]) to now.
pub(crate) fn mono_since(start: i64) -> Duration {
    Duration::from_nanos(mono_ns().saturating_sub(start).max(0) as u64)
}

/// CLOCK_MONOTONIC in nanoseconds, read from the kernel.
fn kernel_mono_ns() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write to; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    #[allow(clippy::useless_conversion)] // time_t and c_long are i64 here, not everywhere
    let ns = i64::from(ts.tv_sec) * 1_000_000_000 + i64::from(ts.tv_nsec);
    ns
}

/// CLOCK_REALTIME in nanoseconds since the epoch, read from the kernel.
fn real_ns() -> i64 {
    // clock_gettime straight: SystemTime's checked subtraction and Duration arithmetic cost
    // about a third as much again as the read itself, on every command.
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write to; CLOCK_REALTIME always exists.
    if unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) } != 0 {
        return SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos() as i64;
    }
    #[allow(clippy::useless_conversion)] // time_t and c_long are i64 here, not everywhere
    let ns = i64::from(ts.tv_sec) * 1_000_000_000 + i64::from(ts.tv_nsec);
    ns
}

/// The system clock extrapolated from the CPU's time-stamp counter. A command reads the clock
/// at least once (twice per `redis.call` in a script, seven times in a one-call script), and
/// the vDSO's clock_gettime costs about 30 ns here, 5% of a pipelined script: `rdtsc` and a
/// multiply cost a third of that. Each thread anchors the counter to a real read and measures
/// its rate over the next real read, then extrapolates for [`WINDOW_NS`] before reading again,
/// so the wall clock's adjustments (NTP slewing, a step) show within that window; a rate that
/// moved by more than slewing can explain (a step during the measurement) is measured again.
/// Used only where the kernel itself keeps time by the TSC (its clocksource is `tsc`, which
/// it picks only when the counter is invariant and synchronized across CPUs); elsewhere
/// every read is the kernel's.
#[cfg(target_arch = "x86_64")]
mod tsc {
    use std::cell::Cell;

    /// How long one rate is extrapolated before the next real read.
    const WINDOW_NS: u128 = 50_000_000;
    /// The shortest span a rate is measured over; until it has passed, reads are real.
    const MIN_SPAN_NS: i64 = 10_000_000;
    /// `Cal::rate` when this machine's TSC is not used.
    const OFF: u64 = u64::MAX;

    /// A thread's anchor: the counter and the real time read together, the rate (ns per
    /// tick, in 32.32 fixed point; 0 while measuring) and how many ticks it is trusted for.
    #[derive(Clone, Copy)]
    pub(super) struct Cal {
        tsc: u64,
        ns: i64,
        rate: u64,
        window: u64,
    }

    thread_local! {
        /// The anchor to CLOCK_REALTIME.
        pub(super) static REAL: Cell<Cal> = const { Cell::new(Cal { tsc: 0, ns: 0, rate: 0, window: 0 }) };
        /// The anchor to CLOCK_MONOTONIC.
        pub(super) static MONO: Cell<Cal> = const { Cell::new(Cal { tsc: 0, ns: 0, rate: 0, window: 0 }) };
    }

    /// The time in ns of the clock `kernel` reads, or None where the TSC is not used.
    #[inline]
    pub(super) fn now_ns(
        cal: &'static std::thread::LocalKey<Cell<Cal>>,
        kernel: fn() -> i64,
    ) -> Option<i64> {
        cal.with(|c| {
            let cal = c.get();
            // SAFETY: every x86_64 CPU has rdtsc.
            let t = unsafe { core::arch::x86_64::_rdtsc() };
            let dt = t.wrapping_sub(cal.tsc);
            if dt < cal.window {
                return Some(cal.ns + ((dt as u128 * cal.rate as u128) >> 32) as i64);
            }
            if cal.rate == OFF {
                return None;
            }
            Some(anchor(c, cal, t, kernel))
        })
    }

    /// A real read: re-anchors the thread and measures the rate since the last anchor.
    #[cold]
    fn anchor(c: &Cell<Cal>, cal: Cal, t: u64, kernel: fn() -> i64) -> i64 {
        let ns = kernel();
        if cal.tsc == 0 && !kernel_uses_tsc() {
            c.set(Cal { rate: OFF, ..cal });
            return ns;
        }
        let span_ns = ns - cal.ns;
        let span_t = t.wrapping_sub(cal.tsc);
        let measuring = Cal {
            tsc: t,
            ns,
            rate: 0,
            window: 0,
        };
        if cal.tsc == 0 || span_ns < 0 || span_t == 0 || span_t > 1 << 62 {
            c.set(measuring);
        } else if span_ns >= MIN_SPAN_NS {
            let rate = ((span_ns as u128) << 32) / span_t as u128;
            // NTP slews by at most 500 ppm; a larger change is a step of the wall clock.
            let stepped = cal.rate != 0 && (rate.abs_diff(cal.rate as u128) << 10) > rate;
            if stepped || rate == 0 || rate >= OFF as u128 {
                c.set(measuring);
            } else {
                let window = ((WINDOW_NS << 32) / rate).min(u64::MAX as u128) as u64;
                c.set(Cal {
                    tsc: t,
                    ns,
                    rate: rate as u64,
                    window,
                });
            }
        }
        // Else still measuring from the same anchor: this read was real.
        ns
    }

    fn kernel_uses_tsc() -> bool {
        static USES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *USES.get_or_init(|| {
            std::fs::read_to_string(
                "/sys/devices/system/clocksource/clocksource0/current_clocksource",
            )
            .is_ok_and(|s| s.trim() == "tsc")
        })
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn tsc_time_stays_within_a_few_microseconds_of_the_kernels() {
            use super::super::{kernel_mono_ns, real_ns};
            for (cal, kernel) in [
                (&super::REAL, real_ns as fn() -> i64),
                (&super::MONO, kernel_mono_ns),
            ] {
                let mut worst = 0;
                let end = std::time::Instant::now() + std::time::Duration::from_millis(300);
                while std::time::Instant::now() < end {
                    let before = kernel();
                    let ours = super::now_ns(cal, kernel).unwrap_or(before);
                    let after = kernel();
                    let off = if ours < before {
                        before - ours
                    } else {
                        (ours - after).max(0)
                    };
                    worst = worst.max(off);
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
                assert!(
                    worst < 200_000,
                    "TSC time strayed {worst} ns from the kernel's"
                );
            }
        }
    }
}

impl Clock {
    /// A clock reading the system time, running.
    ///
    /// ```
    /// let clock = resplock::Clock::new();
    /// let system_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    /// assert!((clock.now_ms() - system_ms).abs() < 1_000);
    /// ```
    pub fn new() -> Self {
        Clock::default()
    }

    /// Microseconds since the Unix epoch.
    ///
    /// ```
    /// let clock = resplock::Clock::new();
    /// clock.freeze();
    /// assert_eq!(clock.now_us() / 1000, clock.now_ms());
    /// ```
    pub fn now_us(&self) -> i64 {
        // Acquire pairs with `resume`'s release: a reader that sees the clock running sees
        // the offset it resumed with.
        let frozen = self.frozen_us.load(Ordering::Acquire);
        if frozen != RUNNING {
            return frozen;
        }
        self.at_us(system_us())
    }

    /// The server time (µs) when the system clock read `system` (a [`system_us`] just taken).
    pub(crate) fn at_us(&self, system: i64) -> i64 {
        let frozen = self.frozen_us.load(Ordering::Acquire);
        if frozen != RUNNING {
            return frozen;
        }
        // Stored at most about once a millisecond (what `recent_ms` resolves): a store per
        // command would move the line between the cores of two workers on every command.
        let last = self.last_system_us.0.load(Ordering::Relaxed);
        if system.abs_diff(last) >= 1000 {
            self.last_system_us.0.store(system, Ordering::Relaxed);
        }
        system + self.offset_us.load(Ordering::Relaxed)
    }

    /// Milliseconds since the Unix epoch as of the last read of this clock (to within a
    /// millisecond), without reading the system clock (Redis's cached `server.unixtime`): for
    /// bookkeeping that tolerates being a little behind, such as a client's last
    /// interaction. The server reads its clock for every command and in its background
    /// cycles (`hz` times a second); a moved or frozen clock is seen at once.
    ///
    /// ```
    /// let clock = resplock::Clock::new();
    /// let read = clock.now_ms();
    /// assert!(clock.recent_ms() >= read - 1 && clock.recent_ms() <= read);
    /// clock.advance_ms(60_000);
    /// assert!(clock.recent_ms() >= read + 59_999);
    /// clock.freeze();
    /// assert_eq!(clock.recent_ms(), clock.now_ms());
    /// ```
    pub fn recent_ms(&self) -> i64 {
        let frozen = self.frozen_us.load(Ordering::Acquire);
        if frozen != RUNNING {
            return frozen.div_euclid(1000);
        }
        (self.last_system_us.0.load(Ordering::Relaxed) + self.offset_us.load(Ordering::Relaxed))
            .div_euclid(1000)
    }

    /// Milliseconds since the Unix epoch.
    ///
    /// ```
    /// let clock = resplock::Clock::new();
    /// clock.freeze();
    /// clock.set_ms(1_700_000_000_000);
    /// clock.advance_ms(250);
    /// assert_eq!(clock.now_ms(), 1_700_000_000_250);
    /// ```
    pub fn now_ms(&self) -> i64 {
        self.now_us().div_euclid(1000)
    }

    /// Whether the clock is frozen ([`Clock::freeze`]).
    ///
    /// ```
    /// let clock = resplock::Clock::new();
    /// assert!(!clock.is_frozen());
    /// clock.freeze();
    /// assert!(clock.is_frozen());
    /// ```
    pub fn is_frozen(&self) -> bool {
        self.frozen_us.load(Ordering::Acquire) != RUNNING
    }

    /// Move this clock forward (or back, with a negative value) by `ms` milliseconds.
    ///
    /// ```
    /// let clock = resplock::Clock::new();
    /// clock.freeze();
    /// let t = clock.now_ms();
    /// clock.advance_ms(1_500);
    /// assert_eq!(clock.now_ms(), t + 1_500);
    /// ```
    pub fn advance_ms(&self, ms: i64) {
        let us = ms.saturating_mul(1000);
        {
            let _g = self.change.lock();
            let frozen = self.frozen_us.load(Ordering::Relaxed);
            if frozen != RUNNING {
                self.frozen_us
                    .store(clamp_us(frozen.saturating_add(us)), Ordering::Release);
            } else {
                self.offset_us.fetch_add(us, Ordering::Relaxed);
            }
        }
        self.moved.notify_waiters();
    }

    /// Set this clock to `unix_ms` (milliseconds since the epoch); a frozen clock stays
    /// frozen there, a running one runs on from there.
    ///
    /// ```
    /// let clock = resplock::Clock::new();
    /// clock.freeze();
    /// clock.set_ms(1_700_000_000_000);
    /// assert_eq!(clock.now_ms(), 1_700_000_000_000);
    /// ```
    pub fn set_ms(&self, unix_ms: i64) {
        let us = clamp_us(unix_ms.saturating_mul(1000));
        {
            let _g = self.change.lock();
            if self.frozen_us.load(Ordering::Relaxed) != RUNNING {
                self.frozen_us.store(us, Ordering::Release);
            } else {
                self.offset_us.store(us - system_us(), Ordering::Relaxed);
            }
        }
        self.moved.notify_waiters();
    }

    /// Stop the clock where it stands: it reads the same until moved or resumed.
    ///
    /// ```
    /// let clock = resplock::Clock::new();
    /// clock.freeze();
    /// let t = clock.now_us();
    /// std::thread::sleep(std::time::Duration::from_millis(2));
    /// assert_eq!(clock.now_us(), t);
    /// ```
    pub fn freeze(&self) {
        let _g = self.change.lock();
        if self.frozen_us.load(Ordering::Relaxed) == RUNNING {
            self.frozen_us.store(self.now_us(), Ordering::Release);
        }
    }

    /// Let a frozen clock run again from the time it stands at.
    ///
    /// ```
    /// let clock = resplock::Clock::new();
    /// clock.freeze();
    /// clock.resume();
    /// assert!(!clock.is_frozen());
    /// ```
    pub fn resume(&self) {
        let _g = self.change.lock();
        let frozen = self.frozen_us.load(Ordering::Relaxed);
        if frozen != RUNNING {
            self.offset_us
                .store(frozen - system_us(), Ordering::Relaxed);
            self.frozen_us.store(RUNNING, Ordering::Release);
        }
    }

    /// Back to the system time, running (a restarted test server).
    ///
    /// ```
    /// let clock = resplock::Clock::new();
    /// clock.freeze();
    /// clock.advance_ms(86_400_000);
    /// clock.reset();
    /// assert!(!clock.is_frozen());
    /// let system_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    /// assert!((clock.now_ms() - system_ms).abs() < 1_000);
    /// ```
    pub fn reset(&self) {
        {
            let _g = self.change.lock();
            self.offset_us.store(0, Ordering::Relaxed);
            self.frozen_us.store(RUNNING, Ordering::Release);
        }
        self.moved.notify_waiters();
    }

    /// Resolve at the next move of this clock (advance, set, reset). Register before reading
    /// the clock (`let m = clock.moved(); ... m.await`) so a move in between is not missed.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let clock = std::sync::Arc::new(resplock::Clock::new());
    /// let moved = clock.moved();
    /// clock.advance_ms(10);
    /// // resolves: the clock moved after registering
    /// tokio::time::timeout(std::time::Duration::from_secs(10), moved).await.unwrap();
    /// # }
    /// ```
    pub fn moved(&self) -> tokio::sync::futures::Notified<'_> {
        self.moved.notified()
    }

    /// Resolve once this clock reads `ms` (Unix time in milliseconds) or later: after the
    /// real time left, or at once when the clock is moved past it. A frozen clock only gets
    /// there by being moved.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let clock = resplock::Clock::new();
    /// clock.freeze();
    /// let deadline = clock.now_ms() + 60_000;
    /// let sleep = clock.sleep_until(deadline);
    /// clock.advance_ms(60_000); // a frozen clock gets there only by being moved
    /// tokio::time::timeout(std::time::Duration::from_secs(10), sleep).await.unwrap();
    /// # }
    /// ```
    pub async fn sleep_until(&self, ms: i64) {
        loop {
            // Registered before the clock is read, so a move in between is not missed.
            let moved = self.moved.notified();
            tokio::pin!(moved);
            moved.as_mut().enable();
            let now = self.now_ms();
            if now >= ms {
                return;
            }
            if self.is_frozen() {
                moved.await;
                continue;
            }
            let left = Duration::from_millis(ms.saturating_sub(now) as u64);
            tokio::select! {
                _ = tokio::time::sleep(left) => {}
                _ = moved => {}
            }
        }
    }
}

/// Keep a time away from the frozen marker (and from overflow when converted back).
fn clamp_us(us: i64) -> i64 {
    us.clamp(i64::MIN / 2, i64::MAX / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_us_agrees_with_system_time() {
        let std_us = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_micros() as i64;
        let ours = system_us();
        assert!((ours - std_us).abs() < 1_000_000, "{ours} vs {std_us}");
        assert!(system_us() >= ours);
    }

    #[test]
    fn a_command_time_taken_from_one_read_follows_moves_and_freezes() {
        let clock = Clock::new();
        let read = system_us();
        assert_eq!(clock.at_us(read), read);
        clock.advance_ms(5_000);
        assert_eq!(clock.at_us(read), read + 5_000_000);
        clock.freeze();
        let frozen = clock.now_us();
        assert_eq!(clock.at_us(system_us()), frozen);
    }

    #[tokio::test]
    async fn moving_the_clock_ends_a_sleep_without_waiting() {
        let clock = std::sync::Arc::new(Clock::new());
        let deadline = clock.now_ms() + 3_600_000;
        let c = clock.clone();
        let sleeper = tokio::spawn(async move { c.sleep_until(deadline).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!sleeper.is_finished());
        clock.advance_ms(3_600_001);
        tokio::time::timeout(Duration::from_secs(5), sleeper)
            .await
            .expect("woken by the move")
            .unwrap();
    }

    #[tokio::test]
    async fn a_deadline_in_the_past_returns_at_once() {
        let clock = Clock::new();
        let past = clock.now_ms() - 10;
        tokio::time::timeout(Duration::from_secs(1), clock.sleep_until(past))
            .await
            .expect("no wait");
    }

    #[test]
    fn a_frozen_clock_stands_still_until_moved() {
        let clock = Clock::new();
        clock.freeze();
        let t = clock.now_us();
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(clock.now_us(), t);
        clock.advance_ms(250);
        assert_eq!(clock.now_us(), t + 250_000);
        clock.advance_ms(-1000);
        assert_eq!(clock.now_us(), t - 750_000);
    }

    #[test]
    fn set_puts_the_clock_at_an_absolute_time_frozen_or_running() {
        let clock = Clock::new();
        clock.set_ms(1_000_000_000_000);
        let now = clock.now_ms();
        assert!(
            (1_000_000_000_000..1_000_000_060_000).contains(&now),
            "{now}"
        );
        clock.freeze();
        clock.set_ms(42);
        assert_eq!(clock.now_ms(), 42);
        clock.resume();
        let now = clock.now_ms();
        assert!((42..60_042).contains(&now), "{now}");
        clock.reset();
        let sys = system_us() / 1000;
        assert!((clock.now_ms() - sys).abs() < 60_000);
    }

    #[test]
    fn resume_runs_on_from_the_frozen_time() {
        let clock = Clock::new();
        clock.set_ms(5_000);
        clock.freeze();
        clock.advance_ms(1_000);
        clock.resume();
        let now = clock.now_ms();
        assert!((6_000..66_000).contains(&now), "{now}");
        assert!(!clock.is_frozen());
    }

    #[tokio::test]
    async fn a_sleep_on_a_frozen_clock_waits_for_a_move() {
        let clock = std::sync::Arc::new(Clock::new());
        clock.freeze();
        let deadline = clock.now_ms() + 10;
        let c = clock.clone();
        let sleeper = tokio::spawn(async move { c.sleep_until(deadline).await });
        tokio::time::sleep(Duration::from_millis(60)).await;
        assert!(
            !sleeper.is_finished(),
            "real time does not move a frozen clock"
        );
        clock.advance_ms(10);
        tokio::time::timeout(Duration::from_secs(5), sleeper)
            .await
            .expect("woken by the move")
            .unwrap();
    }
}
