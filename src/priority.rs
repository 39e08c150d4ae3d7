//! The scheduling class of the threads that write (docs/performance.md, "Writes"): the indexer
//! and the write handlers run as `SCHED_IDLE` threads, which get a CPU only when no request
//! handler or other ordinary thread wants it. A list then never waits behind a write for a
//! core; writes take longer while reads keep every core busy (they still progress: handlers
//! wait on the network between requests), and alone they run as fast as before.

/// Moves the calling thread to the idle scheduling class (on Linux each thread has its own).
/// A refusal leaves it as it was.
pub(crate) fn yield_to_readers() {
    #[cfg(target_os = "linux")]
    // SAFETY: gettid has no preconditions; sched_setscheduler on the calling thread's own ID
    // with a valid parameter only changes how it is scheduled.
    unsafe {
        let thread = libc::syscall(libc::SYS_gettid) as libc::pid_t;
        let param = libc::sched_param { sched_priority: 0 };
        if libc::sched_setscheduler(thread, libc::SCHED_IDLE, &param) != 0 {
            tracing::debug!("a writing thread keeps its scheduling class");
        }
    }
}
