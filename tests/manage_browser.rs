//! The editors' pages (src/http/pages/manage.rs, event_form.rs) end to end in a real browser:
//! `almanac serve --demo` with an administrator, driven by tests/browser/manage.mjs in the
//! system's headless Chromium (playwright-core).
//!
//! Two flows. With the mouse: sign in, create a published event with a new venue and a new
//! category, see it on its page, in the month view and in the JSON API, edit it from the
//! dashboard, move it to the trash and restore it with the bulk form (the API following each
//! step). With the keyboard alone: sign in, reach "New event", type the title, the start and end
//! into the datetime-local fields, choose a status with the arrow keys and submit, every focused
//! element showing a focus indicator; the API then has the event. Screenshots of the filled
//! forms go to target/screenshots/manage-*.png.
//!
//! Needs /usr/bin/chromium (installed here with apt-get when missing and running as root), `node`
//! and `npm` (the modules of tests/browser/package-lock.json, with `npm ci` when missing or older
//! than the lock file). A missing browser or node fails the test: it never skips.

mod common;

use common::browser::{
    ensure_chromium, ensure_node, manifest_dir, run_node_script, setup_lock, CHROMIUM,
};
use common::node::ensure_node_modules;
use common::*;

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

/// How long manage.mjs may take in all (its own budget is 3 minutes per flow).
const MANAGE_TIMEOUT: Duration = Duration::from_secs(10 * 60);
/// The steps manage.mjs reports, by flow: the report must have each.
const MOUSE_STEPS: [&str; 10] = [
    "sign in",
    "new event form",
    "fill and save",
    "view its page",
    "month view of June 2027",
    "API lists it with its venue and category",
    "edit it from the dashboard",
    "trash it with the bulk form",
    "restore it with the bulk form",
    "the restored form",
];
const KEYBOARD_STEPS: [&str; 5] = [
    "sign in with the keyboard",
    "reach \"New event\" with the keyboard",
    "fill the form with the keyboard",
    "submit with the keyboard",
    "the API has the event",
];

#[test]
fn editors_pages_work_with_the_mouse_and_the_keyboard() {
    {
        let _lock = setup_lock();
        ensure_chromium();
        ensure_node();
        ensure_node_modules(&["playwright-core/package.json"]);
    }

    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    add_user(&dir, &ADMIN);
    let cmd = almanac(["serve", "--demo", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.to_str().unwrap());
    let srv = Server::launch(cmd, None).unwrap_or_else(|f| {
        panic!(
            "`almanac serve --demo` did not start: {}",
            f.output.describe()
        )
    });

    let screenshots = manifest_dir().join("target").join("screenshots");
    let config = json!({
        "base": srv.base,
        "user": ADMIN.name,
        "password": ADMIN.password,
        "chromium": CHROMIUM,
        "screenshots": screenshots,
        "flow_timeout_ms": 180000,
    });
    let report = run_node_script("manage.mjs", &config, MANAGE_TIMEOUT);
    assert_report(&report, &screenshots, &srv);
}

/// Fails with every failure of the report, readably; checks the report has every step.
fn assert_report(report: &Value, screenshots: &Path, srv: &Server) {
    let failures = report["failures"].as_array().cloned().unwrap_or_default();
    let steps = report["steps"].as_array().cloned().unwrap_or_default();
    let mut problems = Vec::new();
    for (flow, names) in [
        ("mouse", &MOUSE_STEPS[..]),
        ("keyboard", &KEYBOARD_STEPS[..]),
    ] {
        for name in names {
            if !steps
                .iter()
                .any(|s| s["flow"] == flow && s["name"] == *name)
            {
                problems.push(format!(
                    "the report has no step {name:?} of the {flow} flow"
                ));
            }
        }
    }
    if failures.is_empty() && problems.is_empty() && report["ok"] == true {
        eprintln!(
            "the editors' pages passed: {} steps in {}; screenshots in {}",
            steps.len(),
            report["browser"].as_str().unwrap_or("?"),
            screenshots.display()
        );
        return;
    }

    let mut s = String::new();
    s.push_str(&format!(
        "\n{} failure(s) of the editors' pages in {} (unique word {}); steps:\n",
        failures.len(),
        report["browser"].as_str().unwrap_or("(no browser)"),
        report["word"].as_str().unwrap_or("?"),
    ));
    for step in &steps {
        let state = if step["ok"] == true {
            "ok     "
        } else if step["info"]["skipped"].is_string() {
            "skipped"
        } else {
            "FAILED "
        };
        s.push_str(&format!(
            "  {state} {}: {}\n",
            step["flow"].as_str().unwrap_or("?"),
            step["name"].as_str().unwrap_or("?")
        ));
    }
    for p in &problems {
        s.push_str(&format!("  ! {p}\n"));
    }
    for f in &failures {
        s.push_str(&format!(
            "\n{} / {}  [{}]\n  {}\n",
            f["flow"].as_str().unwrap_or("?"),
            f["step"].as_str().unwrap_or("?"),
            f["rule"].as_str().unwrap_or("?"),
            f["message"].as_str().unwrap_or("")
        ));
        if let Some(url) = f["url"].as_str() {
            s.push_str(&format!("  at {url}\n"));
        }
        for n in f["nodes"].as_array().into_iter().flatten() {
            let target = n["target"]
                .as_array()
                .map(|t| {
                    t.iter()
                        .map(|x| {
                            x.as_str()
                                .map(str::to_string)
                                .unwrap_or_else(|| x.to_string())
                        })
                        .collect::<Vec<_>>()
                        .join(" >>> ")
                })
                .unwrap_or_else(|| n["target"].to_string());
            s.push_str(&format!(
                "      {target}\n        {}\n",
                n["html"].as_str().unwrap_or("")
            ));
            if let Some(summary) = n["summary"].as_str() {
                s.push_str(&format!("        ({})\n", summary.replace('\n', " ")));
            }
        }
    }
    s.push_str(&format!(
        "\nscreenshots: {}\nserver stderr (last lines):\n{}\n",
        screenshots.display(),
        tail(&srv.stderr_text(), 2000)
    ));
    eprintln!("{s}");
    panic!(
        "{} failure(s) of the editors' pages{} (listed above)",
        failures.len(),
        if problems.is_empty() {
            String::new()
        } else {
            format!(" and {} problem(s) with the report", problems.len())
        }
    );
}
