//! The scopes a route requires, as a type: a handler taking `ProjectCaller<Surveys>` cannot run
//! without `survey:read` (GET) or `survey:write`, and the route table reads that same type back
//! from the handler's signature, so the scopes it lists are the ones enforced. A marker may name
//! more than one object (`SurveyQueries`: `survey` and `query`), for the routes PostHog guards
//! with two scopes.

use actix_web::http::Method;
use actix_web::{HttpRequest, web};
use domain::scope::{AccessKind, RequiredScope, ScopeObject};

use super::json_list::JsonList;
use super::json_object::JsonObject;
use super::pagination::{PageNumber, Pagination};

/// Kinds of object that keys are granted access to, named by a marker type so that the scopes a
/// handler needs are part of its signature, not configuration its route could forget.
pub trait ScopedResource: 'static {
    /// Each object's scope is needed, checked in this order: a key lacking several is told of
    /// the first, as PostHog tells it.
    const OBJECTS: &'static [ScopeObject];
}

/// Declares marker types, each naming the scope objects it needs.
macro_rules! scoped_resources {
    ($($(#[$doc:meta])* $marker:ident => [$($object:ident),+],)+) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub enum $marker {}

        impl ScopedResource for $marker {
            const OBJECTS: &'static [ScopeObject] = &[$(ScopeObject::$object),+];
        }
    )+};
}

scoped_resources! {
    /// `survey:read` / `survey:write`.
    Surveys => [Survey],
    /// `survey:read` and `query:read`: PostHog's JSON responses list reads through its query
    /// engine, so it needs both.
    SurveyQueries => [Survey, Query],
    /// `feature_flag:read` / `feature_flag:write`.
    FeatureFlags => [FeatureFlag],
    /// `cohort:read` / `cohort:write`.
    Cohorts => [Cohort],
    /// `group:read` / `group:write`.
    Groups => [Group],
    /// `early_access_feature:read` / `early_access_feature:write`.
    EarlyAccessFeatures => [EarlyAccessFeature],
    /// `plugin:read` / `plugin:write`.
    Plugins => [Plugin],
    /// `project:read` / `project:write`.
    Projects => [Project],
    /// `organization:read` / `organization:write`.
    Organizations => [Organization],
    /// `user:read` / `user:write`.
    Users => [User],
    /// `activity_log:read` / `activity_log:write`: a resource's activity log is its own scope in
    /// PostHog, so a key may read surveys without reading who changed them, and the reverse.
    ActivityLogs => [ActivityLog],
    /// `webhook:read` / `webhook:write`.
    Webhooks => [Webhook],
    /// `person:read` / `person:write`.
    Persons => [Person],
}

/// The scope a request on `object` with `method` needs: GET, HEAD and OPTIONS read, every other
/// method writes (PostHog's action mapping). The extractors and the route table both ask here.
pub fn required_scope(object: ScopeObject, method: &Method) -> RequiredScope {
    let access = if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        AccessKind::Read
    } else {
        AccessKind::Write
    };
    RequiredScope { object, access }
}

/// Stands where a marker would for an extractor, or a whole handler, that checks no key.
#[derive(Debug, Clone, Copy)]
pub enum Unscoped {}

/// A marker or [`Unscoped`]: the scope objects needed (none for `Unscoped`), readable at
/// compile time.
pub trait ScopeRequirement {
    const OBJECTS: &'static [ScopeObject];
}

impl<R: ScopedResource> ScopeRequirement for R {
    const OBJECTS: &'static [ScopeObject] = R::OBJECTS;
}

impl ScopeRequirement for Unscoped {
    const OBJECTS: &'static [ScopeObject] = &[];
}

/// The scope an extractor, or a handler's whole argument tuple, enforces. The route table
/// requires it of every handler, so a new extractor must say whether it checks a key.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not say which scope it enforces",
    note = "implement `ExtractorScope` for it, with `Resource = Unscoped` if it checks no key"
)]
pub trait ExtractorScope {
    type Resource: ScopeRequirement;
}

/// Two arguments' requirements as one. Only one argument of a handler may name scope objects
/// (a marker naming several is how a route needs several): two callers in one signature do not
/// compile.
pub trait JoinScope<Other: ScopeRequirement>: ScopeRequirement {
    type Joined: ScopeRequirement;
}

impl JoinScope<Unscoped> for Unscoped {
    type Joined = Unscoped;
}

impl<R: ScopedResource> JoinScope<Unscoped> for R {
    type Joined = R;
}

impl<R: ScopedResource> JoinScope<R> for Unscoped {
    type Joined = R;
}

impl ExtractorScope for () {
    type Resource = Unscoped;
}

/// A tuple's requirement joins its head's with its tail's, down to `()`.
macro_rules! extractor_scope_for_tuples {
    () => {};
    ($head:ident $(, $tail:ident)*) => {
        impl<$head: ExtractorScope $(, $tail: ExtractorScope)*> ExtractorScope
            for ($head, $($tail,)*)
        where
            ($($tail,)*): ExtractorScope,
            $head::Resource: JoinScope<<($($tail,)*) as ExtractorScope>::Resource>,
        {
            type Resource =
                <$head::Resource as JoinScope<<($($tail,)*) as ExtractorScope>::Resource>>::Joined;
        }
        extractor_scope_for_tuples!($($tail),*);
    };
}

extractor_scope_for_tuples!(A, B, C, D, E, F);

impl<T: ?Sized> ExtractorScope for web::Data<T> {
    type Resource = Unscoped;
}

/// Path segments read as plain values; routes that take a tenant or an id under one use the
/// caller extractors, which check the key first.
impl<T> ExtractorScope for web::Path<T> {
    type Resource = Unscoped;
}

/// Extractors that check no key.
macro_rules! unscoped {
    ($($extractor:ty),+) => {$(
        impl ExtractorScope for $extractor {
            type Resource = Unscoped;
        }
    )+};
}

unscoped!(
    web::Payload,
    HttpRequest,
    JsonList,
    JsonObject,
    Pagination,
    PageNumber
);
