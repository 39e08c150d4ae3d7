//! What a power loss can take from the search index (docs/architecture.md, "Consistency"):
//! index commits are not synced, so after a power loss the index files written since the last
//! checkpoint may be missing, empty or cut short while `meta.json` names them. The server is
//! killed after acknowledged writes, those files are damaged as a power loss would leave them,
//! and the next start must serve every acknowledged write, by ID, listed and searchable.

mod common;

use common::*;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// One title word per event, each far from the others (search matches prefixes and typos).
const WORDS: [&str; 12] = [
    "amberly",
    "basaltic",
    "cobaltine",
    "dunewalk",
    "emberglow",
    "fjordline",
    "granitic",
    "harbourlight",
    "ironwood",
    "juniperhill",
    "kestrelnest",
    "lanternfest",
];

/// How a power loss left one index file written since the server started.
#[derive(Clone, Copy, Debug)]
enum Damage {
    Missing,
    Empty,
    CutShort,
    /// The length reached the disk, some of the data did not (reads as zeros).
    Zeroed,
}

/// Whether an index commit was published in `index` since `since` (its `meta.json`, which
/// names the commit's segment files, is replaced by every commit).
fn committed_since(index: &Path, since: SystemTime) -> bool {
    std::fs::metadata(index.join("meta.json"))
        .and_then(|m| m.modified())
        .is_ok_and(|modified| modified >= since)
}

fn damage_index_files(index: &Path, since: SystemTime, damage: Damage) -> usize {
    let mut damaged = 0;
    for entry in std::fs::read_dir(index).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        // meta.json (renamed into place) and tantivy's lists stay; segment files go.
        if name.starts_with('.') || name == "meta.json" {
            continue;
        }
        let meta = entry.metadata().unwrap();
        if meta.modified().unwrap() < since {
            continue;
        }
        let path = entry.path();
        match damage {
            Damage::Missing => std::fs::remove_file(&path).unwrap(),
            Damage::Empty => std::fs::File::create(&path).map(drop).unwrap(),
            Damage::CutShort => {
                let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
                file.set_len(meta.len() / 2).unwrap();
            }
            Damage::Zeroed => {
                let mut bytes = std::fs::read(&path).unwrap();
                let half = bytes.len() / 2;
                bytes[..half].fill(0);
                std::fs::write(&path, bytes).unwrap();
            }
        }
        damaged += 1;
    }
    damaged
}

fn acknowledged_writes_survive(damage: Damage) {
    let (_tmp, dir) = fresh_data_dir(&[ADMIN]);
    let mut srv = Server::start(serve_cmd(&dir), None, "serve");
    // Files older than this were synced when the server started (a build or a checkpoint).
    std::thread::sleep(Duration::from_millis(50));
    let since = SystemTime::now();
    let mut ids = Vec::new();
    for word in WORDS {
        let created = srv.create(
            &ADMIN,
            &format!("{NS}/events"),
            &json!({"title": format!("Concert {word}"), "status": "publish",
                    "start_date": "2031-05-01 20:00:00", "end_date": "2031-05-01 22:00:00"}),
        );
        ids.push((created["id"].as_u64().unwrap(), word));
    }
    // The newest writes are searchable from memory first; wait for the commit that writes
    // their index files (docs/architecture.md, "Consistency").
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !committed_since(&dir.join("index"), since) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        committed_since(&dir.join("index"), since),
        "the index committed the writes"
    );
    srv.signal("KILL");
    srv.wait_exit(Duration::from_secs(10));
    let damaged = damage_index_files(&dir.join("index"), since, damage);
    assert!(damaged > 0, "the writes left index files to damage");

    let srv = Server::start(serve_cmd(&dir), None, "serve after the power loss");
    let listed = srv
        .get(&format!(
            "{NS}/events?start_date=2031-01-01&end_date=2031-12-31&per_page=50"
        ))
        .json();
    assert_eq!(listed["total"], WORDS.len(), "{damage:?}");
    for (id, word) in &ids {
        let found = srv.get(&format!(
            "{NS}/events?search={word}&start_date=2031-01-01&end_date=2031-12-31"
        ));
        let found = found.json();
        assert_eq!(found["total"], 1, "{damage:?}: {word}");
        assert_eq!(found["events"][0]["id"], *id, "{damage:?}: {word}");
        let single = srv.get(&format!("{NS}/events/{id}"));
        assert_eq!(single.status, 200, "{}", single.describe());
    }
}

#[test]
fn index_files_lost_to_a_power_loss_are_rebuilt_from_the_store() {
    acknowledged_writes_survive(Damage::Missing);
}

#[test]
fn index_files_emptied_by_a_power_loss_are_rebuilt_from_the_store() {
    acknowledged_writes_survive(Damage::Empty);
}

#[test]
fn index_files_cut_short_by_a_power_loss_are_rebuilt_from_the_store() {
    acknowledged_writes_survive(Damage::CutShort);
}

#[test]
fn index_files_partly_zeroed_by_a_power_loss_are_rebuilt_from_the_store() {
    acknowledged_writes_survive(Damage::Zeroed);
}
