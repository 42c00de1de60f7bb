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

/// Diesel never keeps prepared an `INSERT` of a derived `Insertable` left at its default (each
/// field may write `DEFAULT`): every run would pay a `Parse` round trip and a plan. Binding
/// `None` as `NULL` instead keeps the statement one SQL text, which diesel keeps.
#[test]
fn every_insertable_row_binds_none_as_null_so_its_inserts_stay_prepared() {
    let mut files = Vec::new();
    rust_files(&root().join("crates/adapters/src"), &mut files);
    let mut offenders = Vec::new();
    for file in files {
        let text = fs::read_to_string(&file).unwrap();
        let mut rest = text.as_str();
        while let Some(derive) = rest.find("#[derive(") {
            rest = &rest[derive..];
            let derive_end = rest.find(")]").unwrap();
            let is_insertable = rest[..derive_end].contains("Insertable");
            rest = &rest[derive_end..];
            if !is_insertable {
                continue;
            }
            // The attributes between the derive and its struct.
            let attributes = &rest[..rest.find("struct ").unwrap()];
            if !attributes.contains("treat_none_as_default_value = false") {
                let line = text.len() - rest.len();
                let line = text[..line].lines().count();
                offenders.push(format!(
                    "{}:{line}",
                    file.strip_prefix(root()).unwrap().display()
                ));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "Insertable rows without `treat_none_as_default_value = false`: {offenders:?}"
    );
}
