//! What a route is on the wire, declared once where the route is registered
//! (`routes::table`): its [`Operation`] — summary, tag, id, query parameters, body and
//! successful answer, with the request and response types themselves. The route table and the
//! OpenAPI document (`crate::openapi`) both read these declarations, and neither knows the
//! other's internals: `openapi` renders what `routes` declares.

pub(crate) mod flag_filter_shapes;
pub(crate) mod schemas;
pub(crate) mod survey_shapes;

use utoipa::openapi::path::Parameter;
use utoipa::openapi::{Ref, RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

use schemas::{date_window, limit_offset, numbered, page_limit, paginated, string};

/// Named schemas, gathered for the document's components.
pub(crate) type Components = Vec<(String, RefOr<Schema>)>;

/// `T`'s schema and every schema it refers to, named.
pub(crate) fn collect<T: ToSchema>(schemas: &mut Components) {
    schemas.push((T::name().into_owned(), <T as PartialSchema>::schema()));
    T::schemas(schemas);
}

/// How a caller proves who it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Auth {
    /// A personal API key (`Authorization: Bearer phx_…`).
    PersonalKey,
    /// A project's public token, in the body or the query (the SDK endpoints).
    ProjectToken,
    /// Nothing.
    Open,
}

/// One route's operation, before `openapi` adds its path parameters, errors and scope (those
/// come from the path pattern and the handler's types, so they are not declared again).
pub(crate) struct Operation {
    pub id: &'static str,
    pub tag: &'static str,
    pub summary: &'static str,
    pub auth: Auth,
    pub query: Vec<Parameter>,
    /// The JSON body's schema, and whether a body is required.
    pub body: Option<(RefOr<Schema>, bool)>,
    /// A `multipart/form-data` form taken instead of the JSON body (a file upload).
    pub form: Option<RefOr<Schema>>,
    /// The successful status, and its body (none for 204).
    pub success: (u16, Option<RefOr<Schema>>),
    /// The successful body's media types (JSON but for metrics, static bundles and exports).
    pub media: &'static [&'static str],
    /// Statuses beyond the ones every operation of its kind may answer.
    pub extra_errors: Vec<u16>,
    /// Error statuses answered with an HTML page (a hosted survey's), besides the JSON error an
    /// unmatched path gets.
    pub page_errors: &'static [u16],
    /// Answers `If-None-Match` with a tagged answer's 304 (`ETag` on every 200).
    pub conditional: bool,
    /// Collects the named types the operation refers to, so the document's components are
    /// exactly the request and response types the routes declare.
    pub components: Vec<fn(&mut Components)>,
}

impl Operation {
    /// An operation under `tag`, named `id`, that needs a personal key and answers 200.
    pub fn new(tag: &'static str, id: &'static str, summary: &'static str) -> Self {
        Self {
            id,
            tag,
            summary,
            auth: Auth::PersonalKey,
            query: Vec::new(),
            body: None,
            form: None,
            success: (200, None),
            media: &["application/json"],
            extra_errors: Vec::new(),
            page_errors: &[],
            conditional: false,
            components: Vec::new(),
        }
    }

    pub fn auth(mut self, auth: Auth) -> Self {
        self.auth = auth;
        self
    }

    /// A reference to `T`'s component, which the document then includes.
    fn refer<T: ToSchema>(&mut self) -> RefOr<Schema> {
        self.components.push(collect::<T>);
        RefOr::Ref(Ref::from_schema_name(T::name()))
    }

    /// 200 with a `T`.
    pub fn ok<T: ToSchema>(mut self) -> Self {
        let schema = self.refer::<T>();
        self.ok_inline(schema)
    }

    /// 200 with a body described in place, built around a reference to `T`.
    pub fn ok_around<T: ToSchema>(
        mut self,
        wrap: impl FnOnce(RefOr<Schema>) -> RefOr<Schema>,
    ) -> Self {
        let schema = self.refer::<T>();
        self.ok_inline(wrap(schema))
    }

    /// 200 with a body described in place (no type of its own).
    pub fn ok_inline(mut self, schema: impl Into<RefOr<Schema>>) -> Self {
        self.success = (200, Some(schema.into()));
        self
    }

    /// 201 with a `T`.
    pub fn created<T: ToSchema>(mut self) -> Self {
        let schema = self.refer::<T>();
        self.success = (201, Some(schema));
        self
    }

    /// 204, no body.
    pub fn no_content(mut self) -> Self {
        self.success = (204, None);
        self
    }

    /// A 200 whose body is text of one of `media`, not JSON.
    pub fn text(mut self, media: &'static [&'static str]) -> Self {
        self.success = (200, Some(string().into()));
        self.media = media;
        self
    }

    /// An optional JSON body read into `T`.
    pub fn body<T: ToSchema>(mut self) -> Self {
        let schema = self.refer::<T>();
        self.body_inline(schema)
    }

    /// A JSON body that must be sent, read into `T`.
    pub fn required_body<T: ToSchema>(mut self) -> Self {
        let schema = self.refer::<T>();
        self.body = Some((schema, true));
        self
    }

    /// An optional JSON body described in place (no type of its own).
    pub fn body_inline(mut self, schema: impl Into<RefOr<Schema>>) -> Self {
        self.body = Some((schema.into(), false));
        self
    }

    /// A `multipart/form-data` form also taken, described in place.
    pub fn form(mut self, schema: impl Into<RefOr<Schema>>) -> Self {
        self.form = Some(schema.into());
        self
    }

    pub fn query(mut self, parameters: impl IntoIterator<Item = Parameter>) -> Self {
        self.query.extend(parameters);
        self
    }

    /// `date_from`/`date_to`.
    pub fn date_window(self) -> Self {
        self.query(date_window())
    }

    /// `limit`/`offset`, answered with `{"count","next","previous","results"}` of `T`.
    pub fn paginated<T: ToSchema>(mut self) -> Self {
        let item = self.refer::<T>();
        self.query(limit_offset()).ok_inline(paginated(item))
    }

    /// `page`/`limit`, answered with `{"results","next","previous","total_count"}` of `T`.
    pub fn numbered<T: ToSchema>(mut self) -> Self {
        let item = self.refer::<T>();
        self.query(page_limit()).ok_inline(numbered(item))
    }

    /// Error statuses this operation answers with an HTML page.
    pub fn page_errors(mut self, statuses: &'static [u16]) -> Self {
        self.extra_errors.extend(statuses);
        self.page_errors = statuses;
        self
    }

    /// A status beyond the ones every operation of its kind may answer.
    pub fn also(mut self, status: u16) -> Self {
        self.extra_errors.push(status);
        self
    }

    /// Tags its answer (`ETag`) and answers a request already holding it with a bodiless 304.
    pub fn conditional(mut self) -> Self {
        self.conditional = true;
        self
    }
}
