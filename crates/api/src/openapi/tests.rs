//! The document cannot drift from the router, nor the checked-in copy from the document.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;

use super::*;
use crate::routes::listing::{is_documented, route_table};

/// The document as JSON, to read it the way clients do.
fn json() -> Value {
    serde_json::from_str(document_json()).expect("the document is JSON")
}

/// `METHOD /path` of every operation the document lists.
fn operations(document: &Value) -> BTreeSet<String> {
    let mut listed = BTreeSet::new();
    for (path, item) in document["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("a path item").keys() {
            listed.insert(format!("{} {path}", method.to_uppercase()));
        }
    }
    listed
}

#[test]
fn every_route_is_an_operation_and_nothing_else_is() {
    let routes: BTreeSet<String> = route_table()
        .into_iter()
        .filter(|route| is_documented(&route.path))
        .map(|route| format!("{} {}", route.method, openapi_path(&route.path)))
        .collect();
    let document = operations(&json());
    let undocumented: Vec<_> = routes.difference(&document).collect();
    let unrouted: Vec<_> = document.difference(&routes).collect();
    assert!(
        undocumented.is_empty() && unrouted.is_empty(),
        "routes the document lacks (declare their operation in routes/table.rs): {undocumented:#?}\n\
         operations no route answers: {unrouted:#?}"
    );
    // The pages and their assets are served, just not described.
    assert!(
        route_table()
            .iter()
            .any(|route| !is_documented(&route.path))
    );
}

#[test]
fn every_keyed_operation_names_the_scope_its_handler_enforces() {
    let document = json();
    for route in route_table().into_iter().filter(|r| is_documented(&r.path)) {
        let path = openapi_path(&route.path);
        let operation = &document["paths"][&path][route.method.as_str().to_lowercase()];
        let keyed = operation["security"].as_array().is_some();
        let scope = route.scope_list();
        if keyed {
            assert_eq!(
                operation["x-required-scope"].as_str().map(str::to_owned),
                scope,
                "{route}"
            );
            assert_eq!(
                operation["security"][0]["PersonalApiKey"],
                Value::Array(vec![])
            );
        } else {
            assert_eq!(scope, None, "{route} needs a scope but no key");
        }
    }
}

#[test]
fn operation_ids_are_unique_and_every_reference_resolves() {
    let document = json();
    let mut ids = BTreeSet::new();
    for item in document["paths"].as_object().expect("paths").values() {
        for operation in item.as_object().expect("path item").values() {
            let id = operation["operationId"].as_str().expect("an operationId");
            assert!(ids.insert(id.to_owned()), "operationId {id} twice");
        }
    }
    let text = document_json();
    for reference in text.split("\"$ref\": \"").skip(1) {
        let reference = reference.split('"').next().expect("a closing quote");
        let mut target = &document;
        for part in reference.trim_start_matches("#/").split('/') {
            target = &target[part];
        }
        assert!(!target.is_null(), "{reference} does not resolve");
    }
}

#[test]
fn docs_openapi_json_is_the_current_document() {
    let checked_in = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.json");
    let current = document_json();
    if std::env::var_os("BURROW_BLESS").is_some() {
        std::fs::write(&checked_in, current).expect("writing docs/openapi.json");
        return;
    }
    let stored = std::fs::read_to_string(&checked_in).unwrap_or_default();
    assert!(
        stored == current,
        "docs/openapi.json is stale; regenerate it with\n  \
         BURROW_BLESS=1 cargo test -p burrow-api --lib openapi\nand commit it"
    );
}
