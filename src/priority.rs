//! The scheduling priority of the threads that write (docs/performance.md, "Writes"): the
//! indexer and the write handlers run at nice 10, so that when reads and writes both want a
//! CPU the reads go first. Writes then take longer under a read load, instead of every read
//! waiting behind them; alone they run as fast as before. A write also lets the reads in
//! progress finish before it starts, for a moment.

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
/// mostly runs between reads instead of beside them on the other core (docs/performance.md,
/// "Writes"). Under a read load that never pauses, each write starts that much later.
pub(crate) fn defer_to_reads() {
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

    #[test]
    fn a_write_waits_for_a_read_in_progress_but_not_forever() {
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
}
