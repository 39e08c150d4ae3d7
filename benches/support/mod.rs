//! Helpers the HTTP benchmarks share (`http_load`, `write_cost`, `import_from`).

use std::path::Path;
use std::process::Command;

/// A number from the environment, or `default` when unset or unreadable.
pub fn env_number<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// Runs a command to completion; stdout is returned, a failure ends the benchmark.
pub fn run(command: &mut Command) -> String {
    let out = command.output().expect("command runs");
    if !out.status.success() {
        panic!(
            "{command:?} failed: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}
