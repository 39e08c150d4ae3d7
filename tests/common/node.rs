//! The Node.js side of the tests: tests/browser holds the modules (Playwright, axe-core,
//! ICAL.js) that check pages in Chromium and read feeds as calendar apps do.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

/// tests/browser.
pub fn node_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("browser")
}

/// tests/browser/node_modules as package-lock.json says (`npm ci` when missing, older than the
/// lock, or without one of the `required` files).
pub fn ensure_node_modules(required: &[&str]) {
    // Tests of one binary run in parallel: one `npm ci` at a time.
    static INSTALLING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = INSTALLING.lock().unwrap_or_else(|e| e.into_inner());
    let dir = node_dir();
    let lock = dir.join("package-lock.json");
    let modules = dir.join("node_modules");
    let mtime = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
    let lock_time = mtime(&lock).unwrap_or_else(|| panic!("{} is missing", lock.display()));
    // npm writes node_modules/.package-lock.json on every install.
    let installed = mtime(&modules.join(".package-lock.json")).or_else(|| mtime(&modules));
    let complete = || required.iter().all(|f| modules.join(f).exists());
    if installed.is_some_and(|t: SystemTime| t >= lock_time) && complete() {
        return;
    }
    eprintln!("installing tests/browser/node_modules: npm ci");
    let out = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(&dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run npm ({e}); these tests need Node.js 20+ and npm"));
    assert!(
        out.status.success(),
        "`npm ci` in tests/browser failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        complete(),
        "npm ci left {} without one of {required:?}",
        modules.display()
    );
}
