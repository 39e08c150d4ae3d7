//! The serving index's directory: tantivy's memory-mapped directory, except that nothing it
//! writes is synced when written. The index is derived state: redb holds the truth, and the
//! outbox keeps every entry until a checkpoint has made the index files that applied it
//! durable (docs/architecture.md, "Consistency"). So an index commit costs no fsync: the
//! files written since the last checkpoint are synced together by [`IndexDirectory::sync`],
//! once a second or so, and the outbox is pruned after it.
//!
//! What a power loss can take is therefore bounded by the outbox, and detected at start: a
//! directory whose last run did not end with a checkpoint (no [`CLEAN_MARK`]) has its segment
//! files' checksums verified before it is used ([`verify`]); a damaged or missing file makes
//! the server rebuild the index from the store, and an intact but older index catches up from
//! the outbox.
//!
//! tantivy's list of the files it manages (may delete once unused) is kept in memory and never
//! written: tantivy rewrote it before creating each new file, a file and a rename each time,
//! a dozen per commit. When the directory is opened the list is every segment file present;
//! [`remove_unlisted`] then deletes those that `meta.json` does not reference (files of a
//! commit cut short), so they can neither pile up nor collide with the names of later commits.

use std::collections::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tantivy::directory::error::{
    DeleteError, LockError, OpenDirectoryError, OpenReadError, OpenWriteError,
};
use tantivy::directory::{
    AntiCallToken, Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, TerminatingWrite,
    WatchCallback, WatchHandle, WritePtr,
};
use tantivy::index::SegmentComponent;
use tantivy::Index;

/// tantivy's list of the files it manages, in the index directory.
const MANAGED_LIST: &str = ".managed.json";

/// Present in an index directory whose every file is durable: written after a build and
/// after the checkpoint that ends a run, removed (durably) when the directory is opened.
const CLEAN_MARK: &str = ".clean";

#[derive(Clone, Debug)]
pub(crate) struct IndexDirectory {
    inner: MmapDirectory,
    root: PathBuf,
    /// Files written since the last [`IndexDirectory::sync`].
    unsynced: Arc<Mutex<HashSet<PathBuf>>>,
    /// tantivy's managed-file list as it last wrote it (module docs).
    managed: Arc<Mutex<Option<Vec<u8>>>>,
}

impl IndexDirectory {
    pub(crate) fn open(root: &Path) -> Result<IndexDirectory, OpenDirectoryError> {
        Ok(IndexDirectory {
            inner: MmapDirectory::open(root)?,
            root: root.to_path_buf(),
            unsynced: Arc::default(),
            managed: Arc::default(),
        })
    }

    /// The managed-file list of a directory just opened: every segment file in it.
    fn files_present(&self) -> io::Result<Vec<u8>> {
        let mut files = Vec::new();
        for entry in fs::read_dir(&self.root)? {
            let name = entry?.file_name().to_string_lossy().into_owned();
            if !(name.starts_with('.') || name == "meta.json" || name.ends_with(".next")) {
                files.push(name);
            }
        }
        Ok(serde_json::to_vec(&files).expect("file names serialize"))
    }

    /// Makes every file written so far durable, and the directory entries naming them.
    pub(crate) fn sync(&self) -> io::Result<()> {
        let written: Vec<PathBuf> = std::mem::take(&mut *self.unsynced.lock().expect("sync list"))
            .into_iter()
            .collect();
        for path in &written {
            match File::open(self.root.join(path)) {
                Ok(file) => file.sync_data()?,
                // Replaced or merged away since: nothing of it is needed.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        File::open(&self.root)?.sync_all()
    }

    fn written(&self, path: &Path) {
        self.unsynced
            .lock()
            .expect("sync list")
            .insert(path.to_path_buf());
    }
}

/// A new file, flushed but not synced when complete (see the module docs).
struct UnsyncedFile(File);

impl Write for UnsyncedFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl TerminatingWrite for UnsyncedFile {
    fn terminate_ref(&mut self, _: AntiCallToken) -> io::Result<()> {
        self.0.flush()
    }
}

impl Directory for IndexDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        self.inner.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        self.inner.delete(path)
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.inner.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(self.root.join(path))
            .map_err(|e| {
                if e.kind() == io::ErrorKind::AlreadyExists {
                    OpenWriteError::FileAlreadyExists(path.to_path_buf())
                } else {
                    OpenWriteError::wrap_io_error(e, path.to_path_buf())
                }
            })?;
        self.written(path);
        Ok(BufWriter::new(Box::new(UnsyncedFile(file))))
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        if path != Path::new(MANAGED_LIST) {
            return self.inner.atomic_read(path);
        }
        let mut managed = self.managed.lock().expect("managed list");
        if managed.is_none() {
            *managed = Some(
                self.files_present()
                    .map_err(|e| OpenReadError::wrap_io_error(e, path.to_path_buf()))?,
            );
        }
        Ok(managed.clone().expect("set above"))
    }

    fn atomic_write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        if path == Path::new(MANAGED_LIST) {
            *self.managed.lock().expect("managed list") = Some(data.to_vec());
            return Ok(());
        }
        // Written aside and renamed over: readers see the old content or the new one.
        let target = self.root.join(path);
        let mut aside_name = path.as_os_str().to_owned();
        aside_name.push(".next");
        let aside = self.root.join(aside_name);
        let mut file = File::create(&aside)?;
        file.write_all(data)?;
        file.flush()?;
        fs::rename(&aside, &target)?;
        self.written(path);
        Ok(())
    }

    fn sync_directory(&self) -> io::Result<()> {
        // Deferred to the next checkpoint (module docs).
        Ok(())
    }

    fn acquire_lock(&self, lock: &Lock) -> Result<DirectoryLock, LockError> {
        self.inner.acquire_lock(lock)
    }

    fn watch(&self, callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.inner.watch(callback)
    }
}

/// Records that every file in `dir` is durable (after a build or a final checkpoint).
pub(crate) fn mark_clean(dir: &Path) -> io::Result<()> {
    File::create(dir.join(CLEAN_MARK))?.sync_all()?;
    File::open(dir)?.sync_all()
}

/// Whether the last run on `dir` ended with every file durable.
pub(crate) fn is_clean(dir: &Path) -> bool {
    dir.join(CLEAN_MARK).exists()
}

/// Removes the mark (durably) before files are written without being synced.
pub(crate) fn unmark_clean(dir: &Path) -> io::Result<()> {
    match fs::remove_file(dir.join(CLEAN_MARK)) {
        Ok(()) => File::open(dir)?.sync_all(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Checks that every file the last commit of `index` references is present and intact (its
/// footer's checksum), as it must be after a power loss before the index is trusted.
pub(crate) fn verify(index: &Index) -> Result<(), String> {
    let metas = index.load_metas().map_err(|e| e.to_string())?;
    let directory = index.directory();
    for path in metas.list_segment_files() {
        // The candidate list includes components a segment may not have (no deletes); one
        // it needs and lacks fails when the reader opens.
        if !directory.exists(&path).map_err(|e| e.to_string())? {
            continue;
        }
        if !directory
            .validate_checksum(&path)
            .map_err(|e| e.to_string())?
        {
            return Err(format!("{} fails its checksum", path.display()));
        }
    }
    Ok(())
}

/// Deletes the segment files in `dir` that the last commit of `index` does not reference
/// (leftovers of commits cut short). Files whose names start with a dot (tantivy's lists and
/// locks) and `meta.json` stay.
pub(crate) fn remove_unlisted(index: &Index, dir: &Path) -> tantivy::Result<()> {
    // Segment ID -> the name of its current delete file, if it has one.
    let living: HashMap<String, Option<PathBuf>> = index
        .searchable_segment_metas()?
        .iter()
        .map(|segment| {
            let deletes = segment
                .has_deletes()
                .then(|| segment.relative_path(SegmentComponent::Delete));
            (segment.id().uuid_string(), deletes)
        })
        .collect();
    for entry in fs::read_dir(dir)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "meta.json" {
            continue;
        }
        let Some((segment, _)) = name.split_once('.') else {
            continue;
        };
        let unlisted = match living.get(segment) {
            None => true,
            // Each commit that deletes from a segment writes it a new delete file.
            Some(deletes) => name.ends_with(".del") && deletes.as_deref() != Some(Path::new(&name)),
        };
        if unlisted {
            match fs::remove_file(dir.join(&name)) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e.into()),
                _ => {}
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use tantivy::schema::{Schema, STRING};
    use tantivy::{doc, IndexWriter};

    #[test]
    fn files_of_commits_cut_short_are_removed_and_the_index_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut schema = Schema::builder();
        let id = schema.add_text_field("id", STRING);
        let index = Index::create(
            IndexDirectory::open(dir.path()).unwrap(),
            schema.build(),
            Default::default(),
        )
        .unwrap();
        let mut writer: IndexWriter = index.writer(15_000_000).unwrap();
        writer.add_document(doc!(id => "a")).unwrap();
        writer.add_document(doc!(id => "c")).unwrap();
        writer.commit().unwrap();
        writer.delete_term(tantivy::Term::from_field_text(id, "a"));
        writer.add_document(doc!(id => "b")).unwrap();
        writer.commit().unwrap();
        drop(writer);
        let before: HashSet<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        // A segment that never reached meta.json, and a delete file a later commit replaced.
        let living = index.searchable_segment_metas().unwrap();
        let with_deletes = living.iter().find(|s| s.has_deletes()).unwrap();
        let stale_deletes = format!("{}.1.del", with_deletes.id().uuid_string());
        for stray in [
            "0123456789abcdef0123456789abcdef.idx",
            stale_deletes.as_str(),
        ] {
            fs::write(dir.path().join(stray), b"partial").unwrap();
        }

        remove_unlisted(&index, dir.path()).unwrap();

        let after: HashSet<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(after, before);
        let reopened = Index::open(IndexDirectory::open(dir.path()).unwrap()).unwrap();
        let searcher = reopened.reader().unwrap().searcher();
        assert_eq!(searcher.num_docs(), 2);
    }
}
