//! The serving index's directory: tantivy's memory-mapped directory, except that its list of
//! managed files is replaced without an fsync.
//!
//! tantivy rewrites that list (`.managed.json`, the files its garbage collection may delete)
//! before creating each new file, and synced every rewrite: six of the twenty or so fsyncs of a
//! create's one-document segment. Segment files and `meta.json` stay synced as before, so a
//! commit is as durable as it was. A list that a power loss takes back to an older version
//! only misses files of commits that never completed; [`remove_unlisted`] deletes those at
//! start, from what `meta.json` references, so they can neither pile up nor collide with
//! the names of later commits.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tantivy::directory::error::{
    DeleteError, LockError, OpenDirectoryError, OpenReadError, OpenWriteError,
};
use tantivy::directory::{
    Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, WatchCallback, WatchHandle, WritePtr,
};
use tantivy::index::SegmentComponent;
use tantivy::Index;

/// tantivy's list of the files it manages, in the index directory.
const MANAGED_LIST: &str = ".managed.json";

#[derive(Clone, Debug)]
pub(crate) struct IndexDirectory {
    inner: MmapDirectory,
    root: PathBuf,
}

impl IndexDirectory {
    pub(crate) fn open(root: &Path) -> Result<IndexDirectory, OpenDirectoryError> {
        Ok(IndexDirectory {
            inner: MmapDirectory::open(root)?,
            root: root.to_path_buf(),
        })
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
        self.inner.open_write(path)
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.inner.atomic_read(path)
    }

    fn atomic_write(&self, path: &Path, data: &[u8]) -> io::Result<()> {
        if path != Path::new(MANAGED_LIST) {
            return self.inner.atomic_write(path, data);
        }
        // Written aside and renamed over: readers see the old list or the new one.
        let target = self.root.join(path);
        let aside = self.root.join(".managed.json.next");
        let mut file = File::create(&aside)?;
        file.write_all(data)?;
        file.flush()?;
        fs::rename(&aside, &target)
    }

    fn sync_directory(&self) -> io::Result<()> {
        self.inner.sync_directory()
    }

    fn acquire_lock(&self, lock: &Lock) -> Result<DirectoryLock, LockError> {
        self.inner.acquire_lock(lock)
    }

    fn watch(&self, callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.inner.watch(callback)
    }
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
