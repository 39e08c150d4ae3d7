//! The scheduling priority of the threads that write (docs/performance.md, "Writes"): the
//! indexer, the index writer's merge threads and the write handlers run at nice 10, so that when reads and writes both want a
//! CPU the reads go first. Writes then take longer under a read load, instead of every read
//! waiting behind them; alone they run as fast as before. While reads are in progress, a
//! write also waits for them to finish (for a moment), and writes are paced to a quarter of
//! the time (see [`write_beside_reads`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// The nice value of writing threads.
const WRITER_NICE: libc::c_int = 10;

/// Lowers the calling thread's scheduling priority to [`WRITER_NICE`] (on Linux each thread has
/// its own nice value). A refusal leaves it as it was.
pub(crate) fn yield_to_readers() {
    #[cfg(target_os = "linux")]
    // SAFETY: gettid has no preconditions; setpriority on the calling thread's own ID only
    // changes how it is scheduled.
    unsafe {
        let thread = libc::syscall(libc::SYS_gettid) as libc::id_t;
        if libc::setpriority(libc::PRIO_PROCESS, thread, WRITER_NICE) != 0 {
            tracing::debug!("a writing thread keeps its priority");
        }
    }
}

/// Longest a write waits for the reads in progress to finish before it starts.
const WRITE_DEFERRAL: Duration = Duration::from_millis(2);

/// While reads are in progress, a write that took `d` makes the next one start no sooner than
/// `WRITE_PACING × d` after it ended (at most [`MAX_WRITE_PAUSE`] later): writes then take
/// about a quarter of the time beside reads.
const WRITE_PACING: u32 = 3;
const MAX_WRITE_PAUSE: Duration = Duration::from_millis(10);

/// When the next write may start while reads are in progress.
static NEXT_WRITE: Mutex<Option<Instant>> = Mutex::new(None);

/// Runs `write` after what reads in progress are owed: the pause the last write earned (see
/// [`WRITE_PACING`]), then the end of the reads in progress (at most [`WRITE_DEFERRAL`]).
/// Without reads in progress a write starts at once. A writer at full speed beside a steady
/// read load thus takes a share of the machine instead of a core (docs/performance.md,
/// "Writes").
pub(crate) fn write_beside_reads<T>(write: impl FnOnce() -> T) -> T {
    if READERS.count.load(Ordering::SeqCst) > 0 {
        let next = *NEXT_WRITE.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if let Some(pause) = next.and_then(|next| next.checked_duration_since(now)) {
            std::thread::sleep(pause);
        }
        defer_to_reads();
    }
    let started = Instant::now();
    let written = write();
    let pause = (started.elapsed() * WRITE_PACING).min(MAX_WRITE_PAUSE);
    *NEXT_WRITE.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now() + pause);
    written
}

/// The reads in progress, and what a write waiting for none waits on.
struct Readers {
    count: AtomicUsize,
    waiting: AtomicUsize,
    lock: Mutex<()>,
    idle: Condvar,
}

static READERS: Readers = Readers {
    count: AtomicUsize::new(0),
    waiting: AtomicUsize::new(0),
    lock: Mutex::new(()),
    idle: Condvar::new(),
};

/// A read in progress, from [`reading`] until dropped.
pub(crate) struct Reading(());

/// Counts a read as in progress until the returned value is dropped.
pub(crate) fn reading() -> Reading {
    READERS.count.fetch_add(1, Ordering::SeqCst);
    Reading(())
}

impl Drop for Reading {
    fn drop(&mut self) {
        if READERS.count.fetch_sub(1, Ordering::SeqCst) == 1
            && READERS.waiting.load(Ordering::SeqCst) > 0
        {
            let _lock = READERS.lock.lock().unwrap_or_else(|e| e.into_inner());
            READERS.idle.notify_all();
        }
    }
}

/// Lets the reads in progress finish first, waiting at most [`WRITE_DEFERRAL`]: a write then
/// mostly runs between reads instead of beside them on the other core. Under a read load that
/// never pauses, each write starts that much later.
fn defer_to_reads() {
    if READERS.count.load(Ordering::SeqCst) == 0 {
        return;
    }
    let deadline = Instant::now() + WRITE_DEFERRAL;
    READERS.waiting.fetch_add(1, Ordering::SeqCst);
    let mut lock = READERS.lock.lock().unwrap_or_else(|e| e.into_inner());
    while READERS.count.load(Ordering::SeqCst) > 0 {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        lock = READERS
            .idle
            .wait_timeout(lock, deadline - now)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
    drop(lock);
    READERS.waiting.fetch_sub(1, Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tests share the process's count of reads: one at a time.
    static SERIAL: Mutex<()> = Mutex::new(());

    #[test]
    fn a_write_waits_for_a_read_in_progress_but_not_forever() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let read = reading();
        let started = Instant::now();
        defer_to_reads();
        assert!(started.elapsed() >= WRITE_DEFERRAL);
        // The read that ends wakes a waiting write.
        let waiting = std::thread::spawn(defer_to_reads);
        drop(read);
        waiting.join().unwrap();
        assert_eq!(READERS.count.load(Ordering::SeqCst), 0);
        assert_eq!(READERS.waiting.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn writes_beside_reads_are_paced_and_writes_alone_are_not() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let write = || std::thread::sleep(Duration::from_millis(2));
        write_beside_reads(write);
        let alone = Instant::now();
        write_beside_reads(|| ());
        assert!(
            alone.elapsed() < WRITE_DEFERRAL,
            "no read in progress: no pause"
        );
        write_beside_reads(write);
        let read = reading();
        let beside = Instant::now();
        write_beside_reads(|| ());
        // The pause the 2 ms write earned, then the read's deferral.
        assert!(beside.elapsed() >= Duration::from_millis(2) * WRITE_PACING);
        drop(read);
    }
}
