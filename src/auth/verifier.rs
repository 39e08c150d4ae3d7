//! Bounded password verification: a few dedicated threads run argon2, each in its own
//! reusable memory, and a request waits a short while for one of them or is refused. argon2
//! holds ~19 MiB for ~50 ms by design; without a bound, a burst of guesses (each with a new
//! password, so that no cache answers it) would hold that much per request at once.

use super::password;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{oneshot, OwnedSemaphorePermit, Semaphore};

/// How long a request waits for a free verifier before it is refused with 503.
pub(crate) const VERIFY_WAIT: Duration = Duration::from_secs(2);

/// Verifications at a time: one per core, at most four (76 MiB of argon2 memory).
fn verifier_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 4)
}

/// All verifiers stayed busy for [`VERIFY_WAIT`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Busy;

struct Job {
    password: String,
    phc: String,
    reply: oneshot::Sender<bool>,
    /// Held until the verification is done, even if the request that asked for it is gone.
    _permit: OwnedSemaphorePermit,
}

pub(crate) struct Verifier {
    permits: Arc<Semaphore>,
    jobs: SyncSender<Job>,
}

impl Verifier {
    pub(crate) fn new() -> Verifier {
        let threads = verifier_threads();
        // A job is only sent with a permit, so the queue never holds more than `threads`.
        let (jobs, queue) = sync_channel::<Job>(threads);
        let queue = Arc::new(Mutex::new(queue));
        for n in 0..threads {
            let queue = queue.clone();
            std::thread::Builder::new()
                .name(format!("verifier-{n}"))
                .spawn(move || work(&queue))
                .expect("spawning a password verifier thread");
        }
        Verifier {
            permits: Arc::new(Semaphore::new(threads)),
            jobs,
        }
    }

    /// Whether `password` matches the PHC string `phc`.
    pub(crate) async fn verify(&self, password: String, phc: String) -> Result<bool, Busy> {
        let permit = tokio::time::timeout(VERIFY_WAIT, self.permits.clone().acquire_owned())
            .await
            .map_err(|_| Busy)?
            .expect("the verifier semaphore is never closed");
        let (reply, answer) = oneshot::channel();
        let job = Job {
            password,
            phc,
            reply,
            _permit: permit,
        };
        if self.jobs.try_send(job).is_err() {
            return Err(Busy);
        }
        Ok(answer.await.unwrap_or(false))
    }
}

impl Default for Verifier {
    fn default() -> Verifier {
        Verifier::new()
    }
}

/// A verifier thread: its argon2 memory is allocated at the first job and kept. The thread
/// ends when the [`Verifier`] (the sending side) is dropped.
fn work(queue: &Mutex<Receiver<Job>>) {
    let mut memory = Vec::new();
    loop {
        let job = match queue.lock().expect("verifier queue lock").recv() {
            Ok(job) => job,
            Err(_) => return,
        };
        let matched = password::verify_in(&job.password, &job.phc, &mut memory);
        let _ = job.reply.send(matched);
    }
}
