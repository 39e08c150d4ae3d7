//! The Python side of the tests: tests/python holds the script that reads feeds with
//! icalendar and recurring-ical-events, as Python calendar tools do, in a virtual environment
//! (tests/python/.venv) of the versions requirements.txt pins.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

/// tests/python.
pub fn python_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("python")
}

/// The Python of tests/python/.venv, with the packages requirements.txt pins (the venv is made
/// again with `python3 -m venv` and `pip install --no-deps -r requirements.txt` when missing
/// or older than requirements.txt).
pub fn python_env() -> PathBuf {
    // Tests of one binary run in parallel: one install at a time.
    static INSTALLING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = INSTALLING.lock().unwrap_or_else(|e| e.into_inner());
    let dir = python_dir();
    let requirements = dir.join("requirements.txt");
    let venv = dir.join(".venv");
    let python = venv.join("bin").join("python");
    let mtime = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
    let requirements_time =
        mtime(&requirements).unwrap_or_else(|| panic!("{} is missing", requirements.display()));
    // A copy of the requirements, written once pip has installed them: an install cut short
    // leaves none.
    let installed = venv.join("requirements.txt");
    if mtime(&installed).is_some_and(|t: SystemTime| t >= requirements_time) && python.exists() {
        return python;
    }
    eprintln!("installing tests/python/.venv: python3 -m venv, pip install -r requirements.txt");
    let out = Command::new("python3")
        .args(["-m", "venv", "--clear"])
        .arg(&venv)
        .current_dir(&dir)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run python3 ({e}); these tests need Python 3.10+ with venv and pip")
        });
    assert!(
        out.status.success(),
        "`python3 -m venv` in tests/python failed ({}; these tests need Python 3.10+ with venv \
         and pip): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-deps",
            "-r",
            "requirements.txt",
        ])
        .current_dir(&dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {} ({e})", python.display()));
    assert!(
        out.status.success(),
        "`pip install --no-deps -r requirements.txt` in tests/python failed ({}; these tests \
         need pip and the packages' index): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    fs::copy(&requirements, &installed)
        .unwrap_or_else(|e| panic!("copy to {}: {e}", installed.display()));
    python
}
