//! The scheduling priority of the threads that write (docs/performance.md, "Writes"): the
//! indexer and the write handlers run at nice 10, so that when reads and writes both want a
//! CPU the reads go first. Writes then take longer under a read load, instead of every read
//! waiting behind them; alone they run as fast as before.

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
