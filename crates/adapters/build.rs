//! Re-embeds the SQL migrations whenever the `migrations/` directory changes.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
