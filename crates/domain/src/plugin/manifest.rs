//! `Manifest`: a plugin's `plugin.json`, read and checked. PostHog answers a 500 for most broken
//! manifests; Burrow answers a 400 saying what is wrong.

use semver::{Version, VersionReq};
use serde_json::{Map, Value};

use super::ConfigSchema;
use crate::error::ValidationError;

/// Longest plugin name Burrow stores (PostHog's `name` column).
pub const MAX_NAME_CHARS: usize = 200;
/// Longest icon URL Burrow stores (PostHog's `icon` column).
pub const MAX_ICON_CHARS: usize = 800;

/// The fields of `plugin.json` a plugin is installed from, with PostHog's defaults filled in.
/// Keys it does not use (`url`, `lib`, …) are ignored.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// Becomes the plugin's name; required and non-blank.
    pub name: String,
    /// `""` when absent.
    pub description: String,
    pub icon: Option<String>,
    /// `config`: a list (current form) or an object keyed by field (legacy form); `[]` when
    /// absent.
    pub config_schema: ConfigSchema,
    /// `publicJobs`, kept verbatim: `{jobName: {payload?: …}}`; `{}` when absent.
    pub public_jobs: Value,
    /// `stateless`; `false` when absent. A stateless plugin has no config.
    pub stateless: bool,
    /// The entry file, if the manifest names one (see `main_file_candidates`).
    pub main: Option<String>,
    /// `posthogVersion` as written, checked by `check_posthog_version`.
    pub posthog_version: Option<String>,
}

impl Manifest {
    /// Reads `text`. Errors name `attr`: `None` (`attr: null`) when the file came in an archive
    /// or a local directory, as PostHog's install and upgrade errors do; `Some("plugin.json")`
    /// when a client wrote the file through `update_source`. A leading byte-order mark is
    /// skipped, as Python's `json.loads` skips it in the bytes PostHog reads.
    ///
    /// # Errors
    /// `Invalid plugin.json: …` when the text is not a JSON object; `plugin.json has no
    /// "name"`; a message naming the field when one has the wrong type or is too long;
    /// `Stateless plugins cannot have a config!`.
    pub fn parse(text: &str, attr: Option<&str>) -> Result<Self, ValidationError> {
        let invalid = |detail: String| match attr {
            Some(attr) => ValidationError::invalid(attr, detail),
            None => ValidationError::invalid_input(detail),
        };
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let value: Value = serde_json::from_str(text)
            .map_err(|error| invalid(format!("Invalid plugin.json: {error}")))?;
        let Value::Object(fields) = value else {
            return Err(invalid("Invalid plugin.json: expected an object".into()));
        };
        let text_field =
            |key: &str, max_chars: Option<usize>| -> Result<Option<String>, ValidationError> {
                match fields.get(key) {
                    None | Some(Value::Null) => Ok(None),
                    Some(Value::String(text)) => match max_chars {
                        Some(max) if text.chars().count() > max => Err(invalid(format!(
                            "plugin.json's \"{key}\" must be at most {max} characters"
                        ))),
                        _ => Ok(Some(text.clone())),
                    },
                    Some(_) => Err(invalid(format!("plugin.json's \"{key}\" must be a string"))),
                }
            };
        let name = text_field("name", Some(MAX_NAME_CHARS))?
            .filter(|name| !name.trim().is_empty())
            .ok_or_else(|| invalid("plugin.json has no \"name\"".into()))?;
        let config_schema = match fields.get("config") {
            None | Some(Value::Null) => ConfigSchema::Fields(Vec::new()),
            Some(config @ (Value::Array(_) | Value::Object(_))) => {
                ConfigSchema::from_json(config.clone())
            }
            Some(_) => {
                return Err(invalid(
                    "plugin.json's \"config\" must be a list or an object".into(),
                ));
            }
        };
        let public_jobs = match fields.get("publicJobs") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(jobs @ Value::Object(_)) => jobs.clone(),
            Some(_) => {
                return Err(invalid(
                    "plugin.json's \"publicJobs\" must be an object".into(),
                ));
            }
        };
        let stateless = match fields.get("stateless") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(stateless)) => *stateless,
            Some(_) => {
                return Err(invalid(
                    "plugin.json's \"stateless\" must be a boolean".into(),
                ));
            }
        };
        if stateless && !config_schema.is_empty() {
            return Err(invalid("Stateless plugins cannot have a config!".into()));
        }
        Ok(Self {
            description: text_field("description", None)?.unwrap_or_default(),
            icon: text_field("icon", Some(MAX_ICON_CHARS))?,
            main: text_field("main", None)?.filter(|main| !main.trim().is_empty()),
            posthog_version: text_field("posthogVersion", None)?,
            name,
            config_schema,
            public_jobs,
            stateless,
        })
    }

    /// Checks `posthogVersion` against the PostHog version this server stands in for, so a
    /// plugin written for a newer PostHog is refused as PostHog refuses it. An absent or empty
    /// requirement accepts any version.
    ///
    /// PostHog reads the requirement as a Python `SimpleSpec` with spaces removed; it is
    /// translated clause by clause (comma-separated) to semver: `==V` and a bare `V` are exact
    /// (`=V`; a partial `1.2` means `1.2.*`), `!=V` excludes `=V`, and every other clause
    /// (`>=`, `>`, `<`, `<=`, `^`, `~`, `*`, `1.x`) is read by `semver::VersionReq` as written.
    ///
    /// # Errors
    /// With `attr: null`, PostHog's `Invalid PostHog semantic version requirement "<spec>"!`
    /// for a requirement that does not parse, and `Currently running PostHog version <running>
    /// does not match this plugin's semantic version requirement "<spec>".` for one not met,
    /// both quoting the requirement as written.
    pub fn check_posthog_version(&self, running: &Version) -> Result<(), ValidationError> {
        let Some(spec) = self
            .posthog_version
            .as_deref()
            .filter(|spec| !spec.is_empty())
        else {
            return Ok(());
        };
        let clauses = parse_requirement(spec).ok_or_else(|| {
            ValidationError::invalid_input(format!(
                "Invalid PostHog semantic version requirement \"{spec}\"!"
            ))
        })?;
        if clauses
            .iter()
            .all(|(negated, requirement)| requirement.matches(running) != *negated)
        {
            Ok(())
        } else {
            Err(ValidationError::invalid_input(format!(
                "Currently running PostHog version {running} does not match this plugin's semantic version requirement \"{spec}\"."
            )))
        }
    }

    /// The files the main file may be, in order (PostHog's `extract_plugin_code`): `main`
    /// (without a leading `./`) when the manifest names one, else `index.js`, then `index.ts`.
    pub fn main_file_candidates(&self) -> Vec<&str> {
        match &self.main {
            Some(main) => vec![main.trim_start_matches("./")],
            None => vec!["index.js", "index.ts"],
        }
    }
}

/// A `SimpleSpec` as semver requirements, each with whether it is negated (`!=`); `None` when a
/// clause does not parse.
fn parse_requirement(spec: &str) -> Option<Vec<(bool, VersionReq)>> {
    let compact: String = spec.chars().filter(|c| !c.is_whitespace()).collect();
    compact
        .split(',')
        .map(|clause| {
            let (negated, clause) = if let Some(version) = clause.strip_prefix("!=") {
                (true, format!("={version}"))
            } else if let Some(version) = clause.strip_prefix("==") {
                (false, format!("={version}"))
            } else if clause.starts_with(|c: char| c.is_ascii_digit()) {
                (false, format!("={clause}"))
            } else {
                (false, clause.to_owned())
            };
            VersionReq::parse(&clause)
                .ok()
                .map(|requirement| (negated, requirement))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::error::ValidationCode;

    const GEOIP: &str = r#"{"name":"GeoIP","url":"https://github.com/PostHog/posthog-plugin-geoip","description":"Enrich PostHog events and persons with IP location data","main":"index.ts","posthogVersion":">=1.24.0","stateless":true,"icon":"https://raw.githubusercontent.com/PostHog/apps/main/packages/posthog-plugin-geoip/logo.png"}"#;

    fn running() -> Version {
        Version::new(1, 43, 0)
    }

    fn parse_error(text: &str) -> ValidationError {
        Manifest::parse(text, None).expect_err(text)
    }

    fn check(spec: &str) -> Result<(), ValidationError> {
        Manifest::parse(
            &json!({"name": "x", "posthogVersion": spec}).to_string(),
            None,
        )
        .expect("the manifest parses")
        .check_posthog_version(&running())
    }

    #[test]
    fn the_geoip_manifest_reads_every_field_with_posthogs_defaults() {
        let manifest = Manifest::parse(GEOIP, None).unwrap();
        assert_eq!(
            manifest,
            Manifest {
                name: "GeoIP".into(),
                description: "Enrich PostHog events and persons with IP location data".into(),
                icon: Some(
                    "https://raw.githubusercontent.com/PostHog/apps/main/packages/posthog-plugin-geoip/logo.png"
                        .into()
                ),
                config_schema: ConfigSchema::Fields(Vec::new()),
                public_jobs: json!({}),
                stateless: true,
                main: Some("index.ts".into()),
                posthog_version: Some(">=1.24.0".into()),
            }
        );
        assert_eq!(manifest.main_file_candidates(), ["index.ts"]);
        assert_eq!(manifest.check_posthog_version(&running()), Ok(()));
    }

    #[test]
    fn a_minimal_manifest_gets_posthogs_defaults() {
        let manifest = Manifest::parse(r#"{"name": "hello"}"#, None).unwrap();
        assert_eq!(manifest.description, "");
        assert_eq!(manifest.icon, None);
        assert_eq!(manifest.config_schema.to_json(), json!([]));
        assert_eq!(manifest.public_jobs, json!({}));
        assert!(!manifest.stateless);
        assert_eq!(manifest.main, None);
        assert_eq!(manifest.main_file_candidates(), ["index.js", "index.ts"]);
        assert_eq!(manifest.check_posthog_version(&running()), Ok(()));
    }

    #[test]
    fn the_hello_world_dict_form_config_is_kept_verbatim() {
        let config = json!({"bar": {"name": "What's in the bar?", "type": "string", "default": "baz", "required": false}});
        let text = json!({"name": "Hello World", "config": config}).to_string();
        let manifest = Manifest::parse(&text, None).unwrap();
        assert_eq!(manifest.config_schema.to_json(), config);
        assert!(!manifest.stateless);
    }

    #[test]
    fn a_list_form_config_and_public_jobs_are_kept_verbatim() {
        let config = json!([
            {"markdown": "Read this first"},
            {"key": "token", "name": "Token", "type": "string", "secret": true, "required": true},
            {"key": "mode", "type": "choice", "choices": ["a", "b"], "visible_if": [["token"]]}
        ]);
        let jobs = json!({"Export": {"payload": {"from": {"type": "date", "required": true}}}});
        let text = json!({"name": "hello", "config": config, "publicJobs": jobs}).to_string();
        let manifest = Manifest::parse(&text, None).unwrap();
        assert_eq!(manifest.config_schema.to_json(), config);
        assert_eq!(manifest.public_jobs, jobs);
    }

    #[test]
    fn a_stateless_plugin_with_a_config_is_refused_but_with_an_empty_one_is_not() {
        for config in [json!([{"key": "a"}]), json!({"a": {"type": "string"}})] {
            let text = json!({"name": "x", "stateless": true, "config": config}).to_string();
            let error = parse_error(&text);
            assert_eq!(
                (error.attr, error.detail.as_str()),
                (None, "Stateless plugins cannot have a config!")
            );
        }
        for config in [json!([]), json!({})] {
            let text = json!({"name": "x", "stateless": true, "config": config}).to_string();
            assert!(Manifest::parse(&text, None).unwrap().stateless);
        }
    }

    #[test]
    fn a_manifest_without_a_name_is_refused() {
        for text in [
            r#"{"description": "no name"}"#,
            r#"{"name": null}"#,
            r#"{"name": "  "}"#,
        ] {
            assert_eq!(
                parse_error(text).detail,
                "plugin.json has no \"name\"",
                "{text}"
            );
        }
        assert_eq!(
            parse_error(r#"{"name": 7}"#).detail,
            "plugin.json's \"name\" must be a string"
        );
        let long = json!({"name": "n".repeat(MAX_NAME_CHARS + 1)}).to_string();
        assert_eq!(
            parse_error(&long).detail,
            "plugin.json's \"name\" must be at most 200 characters"
        );
    }

    #[test]
    fn text_that_is_not_a_json_object_is_refused_as_invalid_plugin_json() {
        let not_json = parse_error("{nope");
        assert_eq!(not_json.attr, None);
        assert_eq!(not_json.code, ValidationCode::Invalid);
        assert!(
            not_json
                .detail
                .starts_with("Invalid plugin.json: key must be a string"),
            "{}",
            not_json.detail
        );
        for text in ["[1]", "\"name\"", "null", "3"] {
            assert_eq!(
                parse_error(text).detail,
                "Invalid plugin.json: expected an object",
                "{text}"
            );
        }
        assert!(
            parse_error("")
                .detail
                .starts_with("Invalid plugin.json: EOF")
        );
    }

    #[test]
    fn errors_name_plugin_json_when_the_caller_asks() {
        let error = Manifest::parse("{}", Some("plugin.json")).unwrap_err();
        assert_eq!(
            (
                error.attr.as_deref(),
                error.detail.as_str(),
                error.code.as_str()
            ),
            (
                Some("plugin.json"),
                "plugin.json has no \"name\"",
                "invalid_input"
            )
        );
    }

    #[test]
    fn fields_of_the_wrong_type_are_refused_by_name() {
        for (field, value, detail) in [
            (
                "config",
                json!("x"),
                "plugin.json's \"config\" must be a list or an object",
            ),
            (
                "publicJobs",
                json!([]),
                "plugin.json's \"publicJobs\" must be an object",
            ),
            (
                "stateless",
                json!("yes"),
                "plugin.json's \"stateless\" must be a boolean",
            ),
            (
                "description",
                json!(1),
                "plugin.json's \"description\" must be a string",
            ),
            (
                "icon",
                json!(false),
                "plugin.json's \"icon\" must be a string",
            ),
            (
                "main",
                json!(["index.js"]),
                "plugin.json's \"main\" must be a string",
            ),
            (
                "posthogVersion",
                json!(1.2),
                "plugin.json's \"posthogVersion\" must be a string",
            ),
        ] {
            let mut manifest = json!({"name": "x"});
            manifest[field] = value;
            assert_eq!(parse_error(&manifest.to_string()).detail, detail, "{field}");
        }
    }

    #[test]
    fn a_byte_order_mark_and_unknown_keys_are_ignored() {
        let text =
            "\u{feff}{\"name\": \"x\", \"lib\": \"lib.js\", \"url\": \"https://github.com/a/b\"}";
        assert_eq!(Manifest::parse(text, None).unwrap().name, "x");
    }

    #[test]
    fn a_named_main_file_is_the_only_candidate_without_its_leading_dot_slash() {
        let manifest =
            Manifest::parse(r#"{"name": "x", "main": "./dist/index.js"}"#, None).unwrap();
        assert_eq!(manifest.main_file_candidates(), ["dist/index.js"]);
        let blank = Manifest::parse(r#"{"name": "x", "main": ""}"#, None).unwrap();
        assert_eq!(blank.main_file_candidates(), ["index.js", "index.ts"]);
    }

    #[test]
    fn posthog_version_requirements_that_1_43_0_meets_are_accepted() {
        for spec in [
            ">=1.24.0",
            ">= 1.25.0",
            ">1.42",
            "^1.2.0",
            "~1.43.0",
            ">=1.0.0,<2.0.0",
            ">= 1.0.0, < 2.0.0",
            "<=1.43.0",
            "1.x",
            "1.43.*",
            "*",
            "1.43.0",
            "==1.43.0",
            "=1.43",
            "!=1.42.0",
            "",
        ] {
            assert_eq!(check(spec), Ok(()), "{spec}");
        }
    }

    #[test]
    fn posthog_version_requirements_that_1_43_0_misses_are_refused_with_posthogs_message() {
        for spec in [
            ">= 2.0.0",
            "<1.0.0",
            "^2",
            "~1.42.0",
            ">=1.0.0,<1.43.0",
            "1.24.0",
            "1.42",
            "==1.24.0",
            "!=1.43.0",
        ] {
            let error = check(spec).expect_err(spec);
            assert_eq!(
                (error.attr, error.detail),
                (
                    None,
                    format!(
                        "Currently running PostHog version 1.43.0 does not match this plugin's semantic version requirement \"{spec}\"."
                    )
                ),
            );
        }
    }

    #[test]
    fn unparsable_posthog_version_requirements_are_refused_quoting_them_as_written() {
        for spec in ["banana", ">= one", ">=1.0.0,", "1.2.3.4", "!==1.0.0", "  "] {
            let error = check(spec).expect_err(spec);
            assert_eq!(
                (error.attr, error.detail),
                (
                    None,
                    format!("Invalid PostHog semantic version requirement \"{spec}\"!")
                ),
            );
        }
    }
}
