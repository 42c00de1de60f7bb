//! Tests of `OxcSourceAnalyzer`: the capabilities read from a plugin's main file, for every
//! export form PostHog plugins use, in TypeScript and JavaScript, and on a real plugin.

use adapters::OxcSourceAnalyzer;
use domain::plugin::{Capabilities, SourceAnalyzer};

/// GeoIP 0.0.7's `index.ts`, unchanged from its npm tarball.
const GEOIP_INDEX: &str = include_str!("data/geoip-index.ts");

fn caps(methods: &[&str], jobs: &[&str], scheduled_tasks: &[&str]) -> Capabilities {
    let owned = |names: &[&str]| names.iter().map(|name| (*name).to_owned()).collect();
    Capabilities {
        methods: owned(methods),
        jobs: owned(jobs),
        scheduled_tasks: owned(scheduled_tasks),
    }
}

fn methods(names: &[&str]) -> Capabilities {
    caps(names, &[], &[])
}

fn analyze(filename: &str, source: &str) -> Result<Capabilities, String> {
    OxcSourceAnalyzer.capabilities(filename, source)
}

/// Runs each `(filename, source, expected)` row, naming the failing row.
fn check(table: &[(&str, &str, Capabilities)]) {
    for (filename, source, expected) in table {
        let actual = analyze(filename, source)
            .unwrap_or_else(|error| panic!("{filename} `{source}` failed to parse: {error}"));
        assert_eq!(&actual, expected, "{filename} `{source}`");
    }
}

#[test]
fn the_geoip_plugin_exports_process_event_through_module_exports_of_a_typed_object() {
    assert_eq!(
        analyze("index.ts", GEOIP_INDEX),
        Ok(methods(&["processEvent"]))
    );
}

#[test]
fn exported_function_declarations_are_methods() {
    check(&[
        (
            "index.ts",
            "export function processEvent(event: PluginEvent) { return event }",
            methods(&["processEvent"]),
        ),
        (
            "index.ts",
            "export async function onEvent(event, meta) {}\nexport async function setupPlugin() {}",
            methods(&["onEvent", "setupPlugin"]),
        ),
        (
            "index.js",
            "export function composeWebhook(event) { return null }",
            methods(&["composeWebhook"]),
        ),
        (
            "index.mjs",
            "export async function exportEvents(events) {}",
            methods(&["exportEvents"]),
        ),
    ]);
}

#[test]
fn exported_variables_are_methods_whatever_their_type_annotation() {
    check(&[
        (
            "index.ts",
            "export const processEvent: Plugin['processEvent'] = async (event) => event",
            methods(&["processEvent"]),
        ),
        (
            "index.ts",
            "export const onEvent = async (event) => {}, teardownPlugin = () => {}",
            methods(&["onEvent", "teardownPlugin"]),
        ),
        (
            "index.js",
            "export let getSettings = function () { return {} }",
            methods(&["getSettings"]),
        ),
        (
            "index.js",
            "export var onSnapshot = () => {}",
            methods(&["onSnapshot"]),
        ),
    ]);
}

#[test]
fn export_lists_give_the_exported_name_not_the_local_one() {
    check(&[
        (
            "index.ts",
            "function handle(event) { return event }\nconst onEvent = () => {}\n\
             export { handle as processEvent, onEvent as onEvent }",
            methods(&["onEvent", "processEvent"]),
        ),
        (
            "index.js",
            "function processEvent(event) { return event }\nexport { processEvent as transform }",
            methods(&[]),
        ),
        (
            "index.js",
            "export { processEvent, setupPlugin } from './plugin'",
            methods(&["processEvent", "setupPlugin"]),
        ),
    ]);
}

#[test]
fn a_default_exported_object_literal_gives_its_methods_jobs_and_scheduled_tasks() {
    check(&[
        (
            "index.ts",
            "async function processEvent(event) { return event }\n\
             export default {\n\
               processEvent,\n\
               onEvent() {},\n\
               async setupPlugin(meta) {},\n\
               jobs: { sync: async () => {}, 'clean-up': async () => {} },\n\
               runEveryHour: async () => {},\n\
             }",
            caps(
                &["onEvent", "processEvent", "setupPlugin"],
                &["clean-up", "sync"],
                &["runEveryHour"],
            ),
        ),
        (
            "index.js",
            "export default { 'onEvent': () => {}, runEveryDay() {} }",
            caps(&["onEvent"], &[], &["runEveryDay"]),
        ),
    ]);
}

#[test]
fn a_default_exported_binding_is_followed_to_its_object_through_type_annotations_and_assertions() {
    check(&[
        (
            "index.ts",
            "const plugin: Plugin = { processEvent: async (event) => event, setupPlugin() {} }\n\
             export default plugin",
            methods(&["processEvent", "setupPlugin"]),
        ),
        (
            "index.ts",
            "const plugin = { onEvent: async () => {} } as Plugin\nexport default plugin",
            methods(&["onEvent"]),
        ),
        (
            "index.ts",
            "const plugin = { composeWebhook: () => null } satisfies Plugin\nexport default plugin",
            methods(&["composeWebhook"]),
        ),
        (
            "index.ts",
            "export default ({ exportEvents: async () => {} } as unknown as Plugin)",
            methods(&["exportEvents"]),
        ),
        (
            "index.tsx",
            "let plugin: Plugin<Meta> = { processEvent: (event) => event }\nexport default plugin",
            methods(&["processEvent"]),
        ),
        (
            "index.js",
            "const base = { setupPlugin() {} }\nconst plugin = { ...base, onEvent() {} }\n\
             export default plugin",
            methods(&["onEvent", "setupPlugin"]),
        ),
    ]);
}

#[test]
fn commonjs_exports_are_read_in_javascript_and_typescript() {
    check(&[
        (
            "index.js",
            "module.exports = { processEvent: (event) => event, runEveryMinute() {} }",
            caps(&["processEvent"], &[], &["runEveryMinute"]),
        ),
        (
            "index.js",
            "exports.onEvent = async () => {}\nexports.setupPlugin = function () {}",
            methods(&["onEvent", "setupPlugin"]),
        ),
        (
            "index.cjs",
            "module.exports.processEvent = (event) => event",
            methods(&["processEvent"]),
        ),
        (
            "index.js",
            "const plugin = { teardownPlugin() {} }\nmodule.exports = plugin",
            methods(&["teardownPlugin"]),
        ),
        (
            "index.ts",
            "const plugin: Plugin = { onEvent: async () => {} }\nexport = plugin",
            methods(&["onEvent"]),
        ),
    ]);
}

#[test]
fn job_names_are_the_keys_of_the_exported_jobs_object() {
    check(&[
        (
            "index.ts",
            "export const jobs: PluginJobs = { myJob: async () => {}, 'other-job': async () => {} }",
            caps(&[], &["myJob", "other-job"], &[]),
        ),
        (
            "index.js",
            "const jobs = { b: () => {}, a: () => {} }\nexport { jobs }",
            caps(&[], &["a", "b"], &[]),
        ),
        (
            "index.ts",
            "const jobs = { exportAll: async () => {} }\nexport default { jobs, onEvent() {} }",
            caps(&["onEvent"], &["exportAll"], &[]),
        ),
        (
            "index.js",
            "exports.jobs = { retry() {}, ['fixed-name']: () => {} }",
            caps(&[], &["fixed-name", "retry"], &[]),
        ),
        (
            "index.js",
            "const plugin = { jobs: { first() {} } }\nmodule.exports = plugin",
            caps(&[], &["first"], &[]),
        ),
    ]);
}

#[test]
fn scheduled_tasks_are_listed_apart_from_methods() {
    check(&[
        (
            "index.ts",
            "export async function runEveryMinute() {}\nexport async function runEveryHour() {}\n\
             export async function runEveryDay() {}\nexport function processEvent(e) { return e }",
            caps(
                &["processEvent"],
                &[],
                &["runEveryDay", "runEveryHour", "runEveryMinute"],
            ),
        ),
        (
            "index.js",
            "export const runEveryDay = async () => {}",
            caps(&[], &[], &["runEveryDay"]),
        ),
    ]);
}

#[test]
fn unknown_and_unexported_names_are_ignored() {
    check(&[
        (
            "index.ts",
            "export function helper() {}\nexport const config = {}\nexport class Client {}\n\
             export type Meta = { config: {} }\nfunction processEvent(e) { return e }",
            methods(&[]),
        ),
        (
            "index.js",
            "export default { helper() {}, version: '1', onEvent() {} }",
            methods(&["onEvent"]),
        ),
        (
            "index.js",
            "other.exports = { processEvent() {} }\nmodule.other = { onEvent() {} }",
            methods(&[]),
        ),
        ("index.ts", "", methods(&[])),
        ("index.js", "// nothing here yet\n", methods(&[])),
    ]);
}

#[test]
fn an_empty_source_has_empty_capabilities() {
    assert_eq!(analyze("index.ts", ""), Ok(Capabilities::default()));
}

#[test]
fn names_exported_twice_are_listed_once_in_sorted_order() {
    check(&[(
        "index.ts",
        "export function setupPlugin() {}\nexport function onEvent() {}\n\
         export const jobs = { zeta() {}, alpha() {} }\n\
         export default { onEvent, composeWebhook() {}, jobs: { alpha() {} } }",
        caps(
            &["composeWebhook", "onEvent", "setupPlugin"],
            &["alpha", "zeta"],
            &[],
        ),
    )]);
}

#[test]
fn a_syntax_error_is_returned_as_the_parsers_first_message() {
    let error = analyze(
        "index.ts",
        "export function processEvent(event {\n  return event\n}",
    )
    .expect_err("a missing parenthesis must not parse");
    assert_eq!(error, "Expected `,` but found `{`");

    let error = analyze("index.js", "module.exports = { onEvent() {} ")
        .expect_err("an unclosed object must not parse");
    assert_eq!(error, "Expected `}` but found `EOF`");
}

#[test]
fn the_dialect_follows_the_file_extension() {
    let typed = "export function processEvent(event: PluginEvent): PluginEvent { return event }";
    assert_eq!(analyze("index.ts", typed), Ok(methods(&["processEvent"])));
    assert_eq!(analyze("plugin.MTS", typed), Ok(methods(&["processEvent"])));
    assert!(
        analyze("index.js", typed).is_err(),
        "type annotations are not JavaScript"
    );

    let jsx = "export const onEvent = () => <div />";
    assert_eq!(analyze("index.tsx", jsx), Ok(methods(&["onEvent"])));
    assert_eq!(analyze("index.jsx", jsx), Ok(methods(&["onEvent"])));
    assert!(analyze("index.js", jsx).is_err(), "JSX is off in .js");
    assert!(analyze("index.ts", jsx).is_err(), "JSX is off in .ts");

    let cast = "const plugin = <Plugin>{ onEvent() {} }\nexport default plugin";
    assert_eq!(analyze("index.ts", cast), Ok(methods(&["onEvent"])));

    assert_eq!(
        analyze("index.cjs", "exports.onEvent = () => {}"),
        Ok(methods(&["onEvent"]))
    );
}

#[test]
fn a_file_that_is_neither_javascript_nor_typescript_is_refused() {
    assert_eq!(
        analyze("plugin.json", "{}"),
        Err(
            "plugin.json is not a JavaScript or TypeScript file (.js, .mjs, .cjs, .jsx, .ts, .tsx)"
                .to_owned()
        )
    );
    assert!(analyze("Makefile", "all:").is_err());
}

#[test]
fn a_source_nested_past_the_bound_is_refused_before_the_parser_recurses() {
    let attack = format!("const a={}1{}", "(".repeat(50_000), ")".repeat(50_000));
    let error = analyze("index.ts", &attack).expect_err("too deep to parse");
    assert!(error.contains("nests more than"), "{error}");
    let unary = format!("export const a = {}1", "!".repeat(1_000_000));
    assert!(analyze("index.js", &unary).is_err());
}

#[test]
fn the_deepest_sources_the_bound_accepts_parse_on_the_analysis_thread() {
    // Each construct at the deepest the bound lets through, the most stack-hungry ones oxc
    // has (measured): none may overflow the analysis thread's stack.
    let levels = 900;
    for (filename, source) in [
        (
            "index.ts",
            format!("const a={}1{};", "(".repeat(levels), ")".repeat(levels)),
        ),
        (
            "index.ts",
            format!(
                "const a={}1{};",
                "{a:".repeat(levels / 3),
                "}".repeat(levels / 3)
            ),
        ),
        (
            "index.ts",
            format!(
                "let x: {}T{};",
                "A<".repeat(levels / 3),
                ">".repeat(levels / 3)
            ),
        ),
        (
            "index.js",
            format!("x={}1{};", "`${".repeat(levels), "}`".repeat(levels)),
        ),
        (
            "index.js",
            format!(
                "x = {}1{};",
                "[...".repeat(levels / 2),
                "]".repeat(levels / 2)
            ),
        ),
        (
            "index.js",
            format!(
                "{}{}",
                "function f(){".repeat(levels / 5),
                "}".repeat(levels / 5)
            ),
        ),
    ] {
        assert_eq!(
            analyze(
                filename,
                &format!("{source}\nexport function onEvent() {{}}")
            ),
            Ok(methods(&["onEvent"])),
            "{}",
            &source[..30]
        );
    }
}
