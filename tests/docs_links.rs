//! Every Markdown link in the repository resolves: to a file or folder inside it (relative
//! links, any `#anchor` aside) or to an absolute URL. The documentation must stand alone.

use std::path::{Path, PathBuf};

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable directory") {
        let path = entry.expect("directory entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() {
            if !matches!(name, "target" | ".git" | "node_modules") {
                markdown_files(&path, out);
            }
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// The targets of `[text](target)` links, code spans and blocks left out.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block || line.starts_with("    ") {
            continue;
        }
        // Drop inline code spans.
        let prose: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            targets.push(after[..end].trim().to_string());
            rest = &after[end..];
        }
    }
    targets
}

#[test]
fn every_markdown_link_resolves_inside_the_repository_or_is_absolute() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    markdown_files(root, &mut files);
    assert!(
        files.iter().any(|f| f.ends_with("docs/api.md")),
        "the documentation is found: {files:?}"
    );
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable Markdown");
        for target in link_targets(&text) {
            checked += 1;
            if target.starts_with("https://")
                || target.starts_with("http://")
                || target.starts_with("mailto:")
                || target.starts_with('#')
            {
                continue;
            }
            let path = target.split('#').next().unwrap_or("");
            let resolved = file.parent().expect("a file has a folder").join(path);
            let inside = resolved
                .canonicalize()
                .is_ok_and(|r| r.starts_with(root.canonicalize().unwrap()));
            if !inside {
                broken.push(format!("{}: {target}", file.display()));
            }
        }
    }
    assert!(checked > 20, "links were found ({checked})");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}
