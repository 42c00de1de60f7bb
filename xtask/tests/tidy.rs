//! Repository hygiene checked as tests: the hexagon's dependency rule, a `//!` header on every
//! Rust file saying what it is for, and docs that name only paths and types that exist.

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

/// The tables the hot paths write (capture's statement, `record_capture.sql`). Cold writes are
/// plain diesel; only these are held to the machinery below.
const HOT_TABLES: [&str; 5] = [
    "survey_events",
    "survey_responses",
    "survey_response_counts",
    "person_properties",
    "webhook_outbox",
];

/// Diesel never keeps prepared an `INSERT` of a derived `Insertable` left at its default (each
/// field may write `DEFAULT`): every run would pay a `Parse` round trip and a plan. A row for a
/// hot table binds `None` as `NULL` instead, which keeps the statement one SQL text diesel keeps.
#[test]
fn every_insertable_row_of_a_hot_table_binds_none_as_null_so_its_inserts_stay_prepared() {
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
            let hot = HOT_TABLES
                .iter()
                .any(|table| attributes.contains(&format!("table_name = {table}")));
            if hot && !attributes.contains("treat_none_as_default_value = false") {
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
        "Insertable rows of hot tables without `treat_none_as_default_value = false`: {offenders:?}"
    );
}

/// Every file and folder of the repository, as paths relative to its root with `/` separators
/// (folders end with `/`); build output and dependencies left out.
fn repository_paths() -> Vec<String> {
    fn walk(root: &Path, dir: &Path, found: &mut Vec<String>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy();
            let output = dir == root && ["target", ".git"].contains(&name.as_ref());
            if output || name == "node_modules" {
                continue;
            }
            let relative = path.strip_prefix(root).unwrap().display().to_string();
            if path.is_dir() {
                found.push(format!("{relative}/"));
                walk(root, &path, found);
            } else {
                found.push(relative);
            }
        }
    }
    let mut found = Vec::new();
    walk(&root(), &root(), &mut found);
    found
}

/// What a doc's code span names as a repository path, if it names one: a Rust, SQL, Markdown or
/// TOML file, or a folder under one of the repository's top-level folders. Placeholders
/// (`<resource>.rs`), globs, URL paths, the files of a plugin or of posthog-js's package
/// (`plugin.json`, `dist/`) and generated output (`target/…`) are not checkable and are left
/// out.
fn named_path(span: &str) -> Option<&str> {
    let span = span.split([':', ' ']).next()?;
    let checkable = !span.is_empty()
        && span
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c))
        && !span.starts_with("target/")
        && !span.starts_with('/')
        && !span.starts_with('.');
    let is_file = [".rs", ".md", ".sql", ".toml"]
        .iter()
        .any(|extension| span.ends_with(extension));
    let is_folder = span.ends_with('/')
        && ["crates/", "migrations/", "docs/", "xtask/", "vendor/"]
            .iter()
            .any(|top| span.starts_with(top));
    (checkable && (is_file || is_folder)).then_some(span)
}

/// A doc that names a file which has moved or gone misleads the next reader more than no doc:
/// every path a doc names in a code span must exist (as the tail of some path in the
/// repository, since docs name files relative to their crate or folder).
#[test]
fn every_path_a_doc_names_exists() {
    let paths = repository_paths();
    let mut docs = vec![root().join("README.md")];
    for entry in fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            docs.push(path);
        }
    }
    let mut missing = Vec::new();
    for doc in docs {
        let text = fs::read_to_string(&doc).unwrap();
        for (index, span) in text.split('`').enumerate() {
            let Some(named) = named_path(span).filter(|_| index % 2 == 1) else {
                continue;
            };
            let exists = paths
                .iter()
                .any(|path| path == named || path.ends_with(&format!("/{named}")));
            if !exists {
                missing.push(format!(
                    "{}: `{named}`",
                    doc.strip_prefix(root()).unwrap().display()
                ));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "paths named in docs that do not exist: {missing:#?}"
    );
}

/// The map of the code names types, traits and functions: each must still be in the code.
/// (`architecture.md` only: the other docs name the wire and the world outside.)
#[test]
fn every_rust_name_the_architecture_names_exists() {
    let mut files = Vec::new();
    rust_files(&root().join("crates"), &mut files);
    rust_files(&root().join("xtask"), &mut files);
    let code: Vec<String> = files
        .iter()
        .map(|file| fs::read_to_string(file).unwrap())
        .collect();
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let in_code = |name: &str| {
        code.iter().any(|text| {
            text.match_indices(name).any(|(at, _)| {
                let before = text[..at].chars().next_back();
                let after = text[at + name.len()..].chars().next();
                !before.is_some_and(is_word) && !after.is_some_and(is_word)
            })
        })
    };
    let text = fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let mut missing = Vec::new();
    for (index, span) in text.split('`').enumerate() {
        // `Type`, `Type::item`, `CONSTANT`, `function` (snake_case with an underscore), `Type<T>`.
        let span = span.split(['<', '(']).next().unwrap_or("");
        let names_code = index % 2 == 1
            && !span.is_empty()
            && span.chars().all(|c| is_word(c) || c == ':')
            && (span.starts_with(|c: char| c.is_ascii_uppercase()) || span.contains('_'));
        if names_code
            && span
                .split("::")
                .any(|part| !part.is_empty() && !in_code(part))
        {
            missing.push(span.to_owned());
        }
    }
    assert!(
        missing.is_empty(),
        "names in docs/architecture.md that the code does not have: {missing:?}"
    );
}
