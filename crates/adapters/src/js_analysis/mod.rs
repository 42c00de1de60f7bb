//! `OxcSourceAnalyzer`: what a plugin's main file exports, read with a real JavaScript and
//! TypeScript parser (oxc), so a listing shows what a plugin does without running it.
//!
//! The source is untrusted and the parser recursive: `nesting` bounds how deep the source nests
//! before it is parsed, and the parse runs on a thread of its own whose stack fits that bound
//! many times over, so no source can overflow a stack and abort the process.

mod nesting;

use std::collections::{BTreeSet, HashMap};

use domain::plugin::{Capabilities, SourceAnalyzer};
use oxc_allocator::Allocator;
use oxc_ast::ast::{
    AssignmentTarget, Declaration, Expression, ObjectExpression, ObjectPropertyKind, Program,
    Statement,
};
use oxc_parser::Parser;
use oxc_span::SourceType;

/// The hooks PostHog's plugin server calls, as `capabilities.methods` lists them.
const METHODS: [&str; 8] = [
    "composeWebhook",
    "exportEvents",
    "getSettings",
    "onEvent",
    "onSnapshot",
    "processEvent",
    "setupPlugin",
    "teardownPlugin",
];

/// The scheduled tasks, as `capabilities.scheduled_tasks` lists them.
const SCHEDULED_TASKS: [&str; 3] = ["runEveryDay", "runEveryHour", "runEveryMinute"];

/// How many identifiers, spreads or nested objects are followed from one export before giving
/// up: enough for `const a = {...}; const plugin = { ...a }; export default plugin`, and a
/// bound on `const a = b; const b = a` cycles.
const MAX_DEPTH: u8 = 8;

/// The parsing thread's stack: about twenty times what the deepest accepted source needs in a
/// debug build (3 KiB a level at most, measured), forty in release. Only what the parse
/// touches is ever committed.
const PARSER_STACK_BYTES: usize = 64 * 1024 * 1024;

/// Reads a plugin's exports statically with oxc. Stateless, so one instance serves every
/// install, upgrade and source edit; the plugin's code is never run.
#[derive(Debug, Default, Clone, Copy)]
pub struct OxcSourceAnalyzer;

impl SourceAnalyzer for OxcSourceAnalyzer {
    fn capabilities(&self, filename: &str, source: &str) -> Result<Capabilities, String> {
        let source_type = source_type(filename)?;
        nesting::check(source, source_type.is_jsx()).map_err(|refusal| refusal.to_string())?;
        std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("plugin-source-analysis".to_owned())
                .stack_size(PARSER_STACK_BYTES)
                .spawn_scoped(scope, || analyze(source, source_type))
                .map_err(|error| format!("the analysis could not start: {error}"))?
                .join()
                .map_err(|_| "the analysis failed".to_owned())?
        })
    }
}

/// Parses `source` and reads its exports; on the analysis thread.
fn analyze(source: &str, source_type: SourceType) -> Result<Capabilities, String> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, source_type).parse();
    // A parser that panicked always reports at least one error, so this covers it too.
    if let Some(error) = parsed.errors.first() {
        return Err(error.message.to_string());
    }
    let module = Module::new(&parsed.program);
    let mut exports = Exports::default();
    for statement in &parsed.program.body {
        module.statement(statement, &mut exports);
    }
    Ok(exports.into_capabilities())
}

/// The dialect of `filename`, from its extension. Plain `.js` is read as a module when it
/// imports or exports and as a script otherwise, so CommonJS plugins parse too; JSX is only
/// accepted in `.jsx` and `.tsx`.
fn source_type(filename: &str) -> Result<SourceType, String> {
    let extension = filename
        .rsplit_once('.')
        .map(|(_, extension)| extension.to_ascii_lowercase())
        .unwrap_or_default();
    match extension.as_str() {
        "js" => Ok(SourceType::unambiguous()),
        "mjs" => Ok(SourceType::mjs()),
        "cjs" => Ok(SourceType::cjs()),
        "jsx" => Ok(SourceType::unambiguous().with_jsx(true)),
        "ts" | "mts" => Ok(SourceType::ts()),
        "cts" => Ok(SourceType::ts().with_script(true)),
        "tsx" => Ok(SourceType::tsx()),
        _ => Err(format!(
            "{filename} is not a JavaScript or TypeScript file (.js, .mjs, .cjs, .jsx, .ts, .tsx)"
        )),
    }
}

/// The top-level bindings of a module (`const|let|var name = <expression>`, exported or not),
/// so `export default plugin`, `module.exports = plugin` and `export { jobs }` can be followed
/// to the object they name.
struct Module<'p, 'a> {
    bindings: HashMap<&'a str, &'p Expression<'a>>,
}

impl<'p, 'a> Module<'p, 'a> {
    fn new(program: &'p Program<'a>) -> Self {
        let mut bindings = HashMap::new();
        for statement in &program.body {
            let declaration = match statement {
                Statement::VariableDeclaration(variables) => variables,
                Statement::ExportNamedDeclaration(export) => match &export.declaration {
                    Some(Declaration::VariableDeclaration(variables)) => variables,
                    _ => continue,
                },
                _ => continue,
            };
            for declarator in &declaration.declarations {
                if let (Some(name), Some(init)) =
                    (declarator.id.get_identifier_name(), &declarator.init)
                {
                    bindings.insert(name.as_str(), init);
                }
            }
        }
        Self { bindings }
    }

    /// Records what one top-level statement exports.
    fn statement(&self, statement: &'p Statement<'a>, exports: &mut Exports) {
        match statement {
            Statement::ExportNamedDeclaration(export) => {
                match &export.declaration {
                    Some(Declaration::FunctionDeclaration(function)) => {
                        if let Some(id) = &function.id {
                            self.export(id.name.as_str(), None, exports);
                        }
                    }
                    Some(Declaration::VariableDeclaration(variables)) => {
                        for declarator in &variables.declarations {
                            if let Some(name) = declarator.id.get_identifier_name() {
                                self.export(name.as_str(), declarator.init.as_ref(), exports);
                            }
                        }
                    }
                    _ => {}
                }
                for specifier in &export.specifiers {
                    // `export { a as b } from './x'` names nothing of this module.
                    let local = if export.source.is_none() {
                        self.bindings.get(specifier.local.name().as_str()).copied()
                    } else {
                        None
                    };
                    self.export(specifier.exported.name().as_str(), local, exports);
                }
            }
            Statement::ExportDefaultDeclaration(export) => {
                if let Some(expression) = export.declaration.as_expression() {
                    self.export_object(expression, exports, 0);
                }
            }
            Statement::TSExportAssignment(export) => {
                self.export_object(&export.expression, exports, 0);
            }
            Statement::ExpressionStatement(statement) => {
                if let Expression::AssignmentExpression(assignment) = &statement.expression {
                    self.commonjs(&assignment.left, &assignment.right, exports);
                }
            }
            _ => {}
        }
    }

    /// `module.exports = …`, `exports.name = …` and `module.exports.name = …`.
    fn commonjs(
        &self,
        target: &'p AssignmentTarget<'a>,
        value: &'p Expression<'a>,
        exports: &mut Exports,
    ) {
        let AssignmentTarget::StaticMemberExpression(member) = target else {
            return;
        };
        let property = member.property.name.as_str();
        match member.object.get_inner_expression() {
            Expression::Identifier(object) => match (object.name.as_str(), property) {
                ("module", "exports") => self.export_object(value, exports, 0),
                ("exports", name) => self.export(name, Some(value), exports),
                _ => {}
            },
            Expression::StaticMemberExpression(outer)
                if outer.property.name == "exports"
                    && matches!(
                        outer.object.get_inner_expression(),
                        Expression::Identifier(module) if module.name == "module"
                    ) =>
            {
                self.export(property, Some(value), exports);
            }
            _ => {}
        }
    }

    /// An export called `name`; for `jobs`, the keys of the object it is bound to are the
    /// job names.
    fn export(&self, name: &str, value: Option<&'p Expression<'a>>, exports: &mut Exports) {
        if name == "jobs"
            && let Some(object) = value.and_then(|value| self.object(value, 0))
        {
            self.keys(object, &mut exports.jobs, 0);
        }
        exports.names.insert(name.to_owned());
    }

    /// Each property of an exported object (`export default`, `module.exports`), as if it were
    /// exported by name; spreads of objects of this module are followed.
    fn export_object(&self, value: &'p Expression<'a>, exports: &mut Exports, depth: u8) {
        let Some(object) = self.object(value, depth) else {
            return;
        };
        for property in &object.properties {
            match property {
                ObjectPropertyKind::ObjectProperty(property) => {
                    if let Some(name) = property.key.static_name() {
                        self.export(&name, Some(&property.value), exports);
                    }
                }
                ObjectPropertyKind::SpreadProperty(spread) => {
                    self.export_object(&spread.argument, exports, depth + 1);
                }
            }
        }
    }

    /// The static keys of an object, following spreads.
    fn keys(&self, object: &'p ObjectExpression<'a>, keys: &mut BTreeSet<String>, depth: u8) {
        for property in &object.properties {
            match property {
                ObjectPropertyKind::ObjectProperty(property) => {
                    if let Some(name) = property.key.static_name() {
                        keys.insert(name.into_owned());
                    }
                }
                ObjectPropertyKind::SpreadProperty(spread) => {
                    if let Some(inner) = self.object(&spread.argument, depth + 1) {
                        self.keys(inner, keys, depth + 1);
                    }
                }
            }
        }
    }

    /// The object literal `value` is, looking through parentheses, `as`, `satisfies` and `!`,
    /// and through identifiers bound at the top of this module.
    fn object(&self, value: &'p Expression<'a>, depth: u8) -> Option<&'p ObjectExpression<'a>> {
        if depth > MAX_DEPTH {
            return None;
        }
        match value.get_inner_expression() {
            Expression::ObjectExpression(object) => Some(object),
            Expression::Identifier(identifier) => {
                let bound = self.bindings.get(identifier.name.as_str())?;
                self.object(bound, depth + 1)
            }
            _ => None,
        }
    }
}

/// Every name a module exports, and the job names found on the way.
#[derive(Default)]
struct Exports {
    names: BTreeSet<String>,
    jobs: BTreeSet<String>,
}

impl Exports {
    /// Keeps only the names PostHog knows, each list sorted (the sets are ordered).
    fn into_capabilities(self) -> Capabilities {
        let among = |known: &[&str]| {
            self.names
                .iter()
                .filter(|name| known.contains(&name.as_str()))
                .cloned()
                .collect()
        };
        Capabilities {
            methods: among(&METHODS),
            scheduled_tasks: among(&SCHEDULED_TASKS),
            jobs: self.jobs.into_iter().collect(),
        }
    }
}
