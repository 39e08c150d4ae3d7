//! Slowing down password guessing (almanac's own addition, docs/operations.md, "Login
//! throttling"; this only ever refuses credentials, never anonymous requests).
//!
//! Failed Basic verifications with new credentials are counted per user name and per client
//! address (a client repeating credentials already refused is answered from the refusal cache
//! and not counted: that is a misconfigured client, not a guesser). Past a few free failures, each further failure locks that key for a window that doubles with every
//! failure (1 s, 2 s, 4 s, … up to 5 minutes). While a key is locked, credentials for it are
//! refused with 429 `rest_too_many_attempts` without running argon2, so guessing gets no
//! answers and costs the server nothing. A successful verification clears the user's count.
//!
//! Why two keys: the per-user count protects one account against guesses from many addresses;
//! the per-address count stops one client from spraying guesses over many accounts (unknown
//! names included, which have no account to count against). An address may be shared by many
//! honest users (NAT, a reverse proxy), so it gets five times the free failures of a user.
//! Other users are not slowed by someone else's failures unless they share the guesser's
//! address and it is locked; even then credentials verified recently (in the credential
//! cache) pass, because they prove knowledge rather than guess.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failures for one user name that are answered normally before locking starts: enough for an
/// owner's typos, while the doubling windows after them make guessing hopeless.
pub(crate) const USER_FREE_FAILURES: u32 = 10;
/// Failures from one address answered normally before locking starts (shared addresses).
pub(crate) const ADDRESS_FREE_FAILURES: u32 = 50;
/// The first lock window; each further failure doubles it.
pub(crate) const FIRST_LOCK: Duration = Duration::from_secs(1);
/// The longest lock window: long enough to make guessing useless (a dozen guesses an hour),
/// short enough that a locked-out owner is back within minutes.
pub(crate) const MAX_LOCK: Duration = Duration::from_secs(300);
/// A key whose last failure is this old is forgotten (its count starts again from zero).
pub(crate) const FORGET_AFTER: Duration = Duration::from_secs(900);
/// Upper bound on remembered keys, so a flood of distinct names or addresses cannot grow
/// memory without bound (about 100 bytes each).
pub(crate) const CAPACITY: usize = 16_384;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    /// A user name, lower-cased (names are unique ASCII-case-insensitively).
    User(String),
    Address(IpAddr),
}

impl Key {
    fn free_failures(&self) -> u32 {
        match self {
            Key::User(_) => USER_FREE_FAILURES,
            Key::Address(_) => ADDRESS_FREE_FAILURES,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Record {
    failures: u32,
    /// Set only past the free failures. Not "`last_failure` when unlocked": concurrent
    /// attempts read the clock before taking the lock, so one may come with a `now` a little
    /// older than a record another has just written, and must not find it locked.
    locked_until: Option<Instant>,
    last_failure: Instant,
}

/// Bounded memory of recent authentication failures.
pub(crate) struct FailureThrottle {
    records: Mutex<HashMap<Key, Record>>,
}

impl FailureThrottle {
    pub(crate) fn new() -> FailureThrottle {
        FailureThrottle {
            records: Mutex::new(HashMap::new()),
        }
    }

    /// Admits an attempt for the user (if it exists) from this address, counting it as a
    /// failure at once, so that a burst of concurrent guesses cannot all pass before the
    /// first of them is verified; or refuses it with how much longer either key is locked.
    /// A success, or an attempt that was not verified after all, takes the count back.
    pub(crate) fn admit(
        &self,
        user: Option<&str>,
        address: IpAddr,
        now: Instant,
    ) -> Result<(), Duration> {
        let mut records = self.records.lock().expect("throttle lock");
        locked(&records, user, address, now)?;
        count_failure(&mut records, user, address, now);
        Ok(())
    }

    /// Refuses an attempt while either key is locked, with how much longer; counts nothing
    /// (see [`FailureThrottle::record_failure`]).
    pub(crate) fn check(
        &self,
        user: Option<&str>,
        address: IpAddr,
        now: Instant,
    ) -> Result<(), Duration> {
        let records = self.records.lock().expect("throttle lock");
        locked(&records, user, address, now)
    }

    /// Counts a failure found after the attempt ran.
    pub(crate) fn record_failure(&self, user: Option<&str>, address: IpAddr, now: Instant) {
        let mut records = self.records.lock().expect("throttle lock");
        count_failure(&mut records, user, address, now);
    }

    /// An admitted attempt succeeded: the user's count starts again, and the address's count
    /// loses this attempt (it keeps earlier failures, which only fade with time, so one valid
    /// account cannot launder guesses at others).
    pub(crate) fn record_success(&self, user: Option<&str>, address: IpAddr) {
        let mut records = self.records.lock().expect("throttle lock");
        if let Some(user) = user {
            records.remove(&Key::User(user.to_ascii_lowercase()));
        }
        take_back(&mut records, Key::Address(address_key(address)));
    }

    /// An admitted attempt was never verified (no verifier was free): it is not counted.
    pub(crate) fn withdraw(&self, user: Option<&str>, address: IpAddr) {
        let mut records = self.records.lock().expect("throttle lock");
        for key in keys(user, address) {
            take_back(&mut records, key);
        }
    }
}

/// How much longer either key is locked, if it is.
fn locked(
    records: &HashMap<Key, Record>,
    user: Option<&str>,
    address: IpAddr,
    now: Instant,
) -> Result<(), Duration> {
    let locked = keys(user, address)
        .filter_map(|key| records.get(&key)?.locked_until)
        .filter(|until| *until > now)
        .map(|until| until - now)
        .max();
    match locked {
        Some(retry_after) => Err(retry_after),
        None => Ok(()),
    }
}

/// Counts one failure of both keys, locking those past their free failures.
fn count_failure(
    records: &mut HashMap<Key, Record>,
    user: Option<&str>,
    address: IpAddr,
    now: Instant,
) {
    for key in keys(user, address) {
        if !records.contains_key(&key) && records.len() >= CAPACITY {
            make_room(records, now);
        }
        let free = key.free_failures();
        let record = records.entry(key).or_insert(Record {
            failures: 0,
            locked_until: None,
            last_failure: now,
        });
        if now.duration_since(record.last_failure) > FORGET_AFTER {
            record.failures = 0;
        }
        record.failures = record.failures.saturating_add(1);
        // Attempts read the clock before the lock: keep the newest.
        record.last_failure = record.last_failure.max(now);
        if record.failures > free {
            record.locked_until = Some(now + lock_window(record.failures - free));
        }
    }
}

/// Uncounts one admitted attempt of `key`, and the lock it may have started.
fn take_back(records: &mut HashMap<Key, Record>, key: Key) {
    let free = key.free_failures();
    if let Some(record) = records.get_mut(&key) {
        record.failures = record.failures.saturating_sub(1);
        record.locked_until = (record.failures > free)
            .then(|| record.last_failure + lock_window(record.failures - free));
    }
}

impl Default for FailureThrottle {
    fn default() -> FailureThrottle {
        FailureThrottle::new()
    }
}

fn keys(user: Option<&str>, address: IpAddr) -> impl Iterator<Item = Key> {
    user.map(|name| Key::User(name.to_ascii_lowercase()))
        .into_iter()
        .chain(std::iter::once(Key::Address(address_key(address))))
}

/// IPv6 clients usually control a whole /64, so that is what one address means here; IPv4
/// addresses (also when mapped into IPv6) are taken as they are.
fn address_key(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V4(_) => address,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let mut segments = v6.segments();
                segments[4..].fill(0);
                IpAddr::V6(segments.into())
            }
        },
    }
}

/// The lock window after the `n`-th failure past the free ones (n ≥ 1).
fn lock_window(n: u32) -> Duration {
    let doublings = (n - 1).min(16);
    FIRST_LOCK.saturating_mul(1 << doublings).min(MAX_LOCK)
}

/// Forgets old records; when the map is still full of live ones, forgets the tenth with the
/// oldest failures at once, so the cost of this scan is shared by the next insertions.
fn make_room(records: &mut HashMap<Key, Record>, now: Instant) {
    records.retain(|_, r| now.duration_since(r.last_failure) <= FORGET_AFTER);
    if records.len() < CAPACITY {
        return;
    }
    let mut ages: Vec<Instant> = records.values().map(|r| r.last_failure).collect();
    let (_, cut, _) = ages.select_nth_unstable(CAPACITY / 10);
    let cut = *cut;
    records.retain(|_, r| r.last_failure > cut);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_user_is_locked_after_the_free_failures_for_a_doubling_window() {
        let throttle = FailureThrottle::new();
        let t0 = Instant::now();
        let from = ip("192.0.2.1");
        for _ in 0..=USER_FREE_FAILURES {
            assert_eq!(throttle.admit(Some("Ana"), from, t0), Ok(()));
        }
        assert_eq!(throttle.admit(Some("ANA"), from, t0), Err(FIRST_LOCK));
        // Another user from another address is unaffected; the same user from anywhere is not.
        assert_eq!(throttle.admit(Some("bo"), ip("192.0.2.2"), t0), Ok(()));
        assert!(throttle.admit(Some("ana"), ip("198.51.100.7"), t0).is_err());
        // After the window, the next failure locks for twice as long.
        let t1 = t0 + FIRST_LOCK;
        assert_eq!(throttle.admit(Some("ana"), from, t1), Ok(()));
        assert_eq!(throttle.admit(Some("ana"), from, t1), Err(FIRST_LOCK * 2));
        // Success resets the user.
        throttle.record_success(Some("Ana"), from);
        assert_eq!(throttle.admit(Some("ana"), ip("192.0.2.9"), t1), Ok(()));
    }

    #[test]
    fn an_address_is_locked_after_its_own_free_failures_over_many_names() {
        let throttle = FailureThrottle::new();
        let t0 = Instant::now();
        let from = ip("2001:db8:1:2:3:4:5:6");
        for _ in 0..=ADDRESS_FREE_FAILURES {
            assert_eq!(throttle.admit(None, from, t0), Ok(()));
        }
        // The same /64 is the same client; another /64 is not.
        assert_eq!(
            throttle.admit(Some("new"), ip("2001:db8:1:2::99"), t0),
            Err(FIRST_LOCK)
        );
        assert_eq!(throttle.admit(None, ip("2001:db8:1:3::1"), t0), Ok(()));
        // Forgotten after a quiet period.
        let later = t0 + FORGET_AFTER + Duration::from_secs(1);
        assert_eq!(throttle.admit(None, from, later), Ok(()));
        assert_eq!(throttle.admit(None, from, later), Ok(()));
    }

    #[test]
    fn attempts_taken_back_unlock_what_they_locked() {
        let throttle = FailureThrottle::new();
        let t0 = Instant::now();
        let from = ip("192.0.2.1");
        for _ in 0..=USER_FREE_FAILURES {
            assert_eq!(throttle.admit(Some("ana"), from, t0), Ok(()));
        }
        throttle.withdraw(Some("ana"), from);
        assert_eq!(throttle.admit(Some("ana"), from, t0), Ok(()));
        // Successes do not pile up against the address.
        let other = ip("192.0.2.2");
        for _ in 0..ADDRESS_FREE_FAILURES * 3 {
            assert_eq!(throttle.admit(Some("bo"), other, t0), Ok(()));
            throttle.record_success(Some("bo"), other);
        }
    }

    #[test]
    fn checking_counts_nothing_and_only_recorded_failures_lock() {
        let throttle = FailureThrottle::new();
        let address: IpAddr = "192.0.2.9".parse().unwrap();
        let now = Instant::now();
        for _ in 0..1000 {
            assert!(throttle.check(None, address, now).is_ok());
        }
        for _ in 0..ADDRESS_FREE_FAILURES {
            throttle.record_failure(None, address, now);
        }
        assert!(throttle.check(None, address, now).is_ok());
        throttle.record_failure(None, address, now);
        assert_eq!(throttle.check(None, address, now), Err(FIRST_LOCK));
    }

    #[test]
    fn an_attempt_that_read_the_clock_before_another_is_not_locked_by_it() {
        let throttle = FailureThrottle::new();
        let from = ip("192.0.2.1");
        let earlier = Instant::now();
        let later = earlier + Duration::from_millis(3);
        assert_eq!(throttle.admit(Some("ana"), from, later), Ok(()));
        assert_eq!(throttle.admit(Some("ana"), from, earlier), Ok(()));
        throttle.withdraw(Some("ana"), from);
        assert_eq!(throttle.check(Some("ana"), from, earlier), Ok(()));
    }

    #[test]
    fn lock_windows_double_up_to_the_maximum() {
        assert_eq!(lock_window(1), FIRST_LOCK);
        assert_eq!(lock_window(4), FIRST_LOCK * 8);
        assert_eq!(lock_window(10), MAX_LOCK);
        assert_eq!(lock_window(u32::MAX), MAX_LOCK);
    }

    #[test]
    fn memory_stays_bounded() {
        let throttle = FailureThrottle::new();
        let t0 = Instant::now();
        for i in 0..(CAPACITY as u32 + 5_000) {
            let from = IpAddr::V4(i.into());
            let _ = throttle.admit(None, from, t0 + Duration::from_millis(i.into()));
        }
        let len = throttle.records.lock().unwrap().len();
        assert!(len <= CAPACITY, "{len} records");
        // The most recent failures are the ones kept.
        let last = IpAddr::V4((CAPACITY as u32 + 4_999).into());
        assert!(throttle
            .records
            .lock()
            .unwrap()
            .contains_key(&Key::Address(last)));
    }
}
