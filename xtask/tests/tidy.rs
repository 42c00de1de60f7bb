//! Repository hygiene checked as tests: the hexagon's dependency rule, and a `//!` header on
//! every Rust file saying what it is for.

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The crate names listed in a manifest's `[dependencies]` table (not dev- or build-).
fn dependencies(manifest: &Path) -> Vec<String> {
    let text = fs::read_to_string(manifest).unwrap();
    let mut in_dependencies = false;
    let mut names = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
            continue;
        }
        if in_dependencies && let Some((name, _)) = line.split_once(['=', '.']) {
            let name = name.trim();
            if !name.is_empty() && !name.starts_with('#') {
                names.push(name.to_owned());
            }
        }
    }
    names
}

#[test]
fn the_domain_does_no_io_and_the_api_never_reaches_the_adapters() {
    let forbidden_in_domain = [
        "actix-web",
        "diesel",
        "diesel-async",
        "tokio",
        "reqwest",
        "adapters",
        "api",
        "anyhow",
        // Caches are infrastructure: what a node remembers is kept by the adapters.
        "moka",
    ];
    let domain = dependencies(&root().join("crates/domain/Cargo.toml"));
    for name in forbidden_in_domain {
        assert!(
            !domain.contains(&name.to_owned()),
            "crates/domain must not depend on {name}"
        );
    }
    let api = dependencies(&root().join("crates/api/Cargo.toml"));
    for name in ["adapters", "diesel", "diesel-async"] {
        assert!(
            !api.contains(&name.to_owned()),
            "crates/api must not depend on {name}"
        );
    }
    let adapters = dependencies(&root().join("crates/adapters/Cargo.toml"));
    for name in ["api", "actix-web"] {
        assert!(
            !adapters.contains(&name.to_owned()),
            "crates/adapters must not depend on {name}"
        );
    }
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

#[test]
fn every_rust_file_opens_with_a_module_doc() {
    let mut files = Vec::new();
    rust_files(&root().join("crates"), &mut files);
    rust_files(&root().join("xtask"), &mut files);
    let missing: Vec<_> = files
        .iter()
        .filter(|file| !fs::read_to_string(file).unwrap().starts_with("//!"))
        .map(|file| file.strip_prefix(root()).unwrap().display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "files without a `//!` header: {missing:?}"
    );
}
