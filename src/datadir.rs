//! The data directory (docs/operations.md, "Data directory"): layout, modes and the exclusive
//! lock every command takes before touching anything inside.

use std::fs::{self, DirBuilder, File, OpenOptions, TryLockError};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub(crate) enum DataDirError {
    #[error(
        "data directory {0} is in use by another almanac process (is \"almanac serve\" running?)"
    )]
    Locked(String),
    #[error("data directory {0} does not exist")]
    Missing(String),
    #[error("data directory {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// An open, locked data directory. The lock is released when this is dropped.
pub(crate) struct DataDir {
    root: PathBuf,
    _lock: File,
}

impl DataDir {
    /// Opens `root`, creating it (mode 0700, with parents) when `create` is set, and takes the
    /// non-blocking exclusive lock on `almanac.lock`.
    pub(crate) fn open(root: &Path, create: bool) -> Result<DataDir, DataDirError> {
        let display = root.display().to_string();
        let io = |source| DataDirError::Io {
            path: display.clone(),
            source,
        };
        if !root.is_dir() {
            if !create {
                return Err(DataDirError::Missing(display));
            }
            DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(root)
                .map_err(io)?;
        }
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(root.join("almanac.lock"))
            .map_err(io)?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Err(DataDirError::Locked(display)),
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        Ok(DataDir {
            root: root.to_path_buf(),
            _lock: lock,
        })
    }

    /// The store file, created empty with mode 0600 when missing so that redb never creates
    /// it with the process umask.
    pub(crate) fn store_path(&self) -> Result<PathBuf, DataDirError> {
        let path = self.root.join("almanac.redb");
        if !path.exists() {
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .mode(0o600)
                .open(&path)
                .map_err(|source| DataDirError::Io {
                    path: path.display().to_string(),
                    source,
                })?;
        }
        Ok(path)
    }

    /// The search index directory (rebuildable from the store).
    pub(crate) fn index_path(&self) -> PathBuf {
        self.root.join("index")
    }

    /// Writes the initial administrator password file (mode 0600, replaced if present).
    pub(crate) fn write_initial_password(&self, password: &str) -> std::io::Result<()> {
        let path = self.root.join("initial-admin-password");
        // Remove first so that an existing file with looser permissions is not reused.
        let _ = fs::remove_file(&path);
        let mut file = OpenOptions::new()
            .create_new(true)
            .write(true)
            .mode(0o600)
            .open(&path)?;
        writeln!(file, "{password}")?;
        file.sync_all()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn creates_locks_and_refuses_a_second_holder() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("a/b");
        assert!(matches!(
            DataDir::open(&root, false),
            Err(DataDirError::Missing(_))
        ));
        let dir = DataDir::open(&root, true).unwrap();
        let mode = fs::metadata(&root).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert!(matches!(
            DataDir::open(&root, true),
            Err(DataDirError::Locked(_))
        ));
        dir.write_initial_password("pw").unwrap();
        let file = root.join("initial-admin-password");
        assert_eq!(fs::read_to_string(&file).unwrap(), "pw\n");
        assert_eq!(
            fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
        drop(dir);
        assert!(DataDir::open(&root, false).is_ok());
    }
}
