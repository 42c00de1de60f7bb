//! Limit/offset pagination as DRF's `LimitOffsetPagination` does it, with a cap on `limit`.

use std::future::{Ready, ready};

use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpRequest};
use domain::ports::{Page, PageRequest};
use serde::Serialize;
use url::Url;

use crate::error::ApiError;
use crate::settings::ApiSettings;

/// Page size when `limit` is absent or unusable.
pub const DEFAULT_LIMIT: u32 = 100;
/// Largest page served; larger `limit`s are lowered to it (and `next` links continue).
pub const MAX_LIMIT: u32 = 1000;

/// The `limit`/`offset` of a list request. Garbage falls back to defaults instead of failing,
/// as DRF does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pagination {
    pub limit: u32,
    pub offset: u64,
}

impl Pagination {
    pub fn from_query(query: &str) -> Self {
        let mut pagination = Self {
            limit: DEFAULT_LIMIT,
            offset: 0,
        };
        for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
            match key.as_ref() {
                "limit" => pagination.limit = limit(&value, DEFAULT_LIMIT),
                "offset" => pagination.offset = value.trim().parse::<u64>().unwrap_or(0),
                _ => {}
            }
        }
        pagination
    }

    pub fn page_request(self) -> PageRequest {
        PageRequest {
            limit: self.limit,
            offset: self.offset,
        }
    }
}

/// A `limit` as sent: `default` when absent, zero or garbage, never more than [`MAX_LIMIT`].
fn limit(value: &str, default: u32) -> u32 {
    match value.trim().parse::<u64>() {
        Ok(0) | Err(_) => default,
        Ok(limit) => u32::try_from(limit).unwrap_or(MAX_LIMIT).min(MAX_LIMIT),
    }
}

impl FromRequest for Pagination {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(Ok(Self::from_query(request.query_string())))
    }
}

/// The list body: `{"count","next","previous","results"}`.
#[derive(Debug, Serialize)]
pub struct Paginated<T> {
    pub count: u64,
    pub next: Option<String>,
    pub previous: Option<String>,
    pub results: Vec<T>,
}

impl<T> Paginated<T> {
    /// Wraps one page with absolute links to its neighbours. Links keep the request's other
    /// query parameters, sorted by name like DRF; the base is `BURROW_SITE_URL` when set. The
    /// items become `T` (a response type) on the way.
    pub fn new(request: &HttpRequest, pagination: Pagination, page: Page<impl Into<T>>) -> Self {
        let current = current_url(request);
        let Pagination { limit, offset } = pagination;
        let next = (offset.saturating_add(u64::from(limit)) < page.count)
            .then(|| with_window(&current, limit, Some(offset + u64::from(limit))));
        let previous = (offset > 0).then(|| {
            let previous_offset = offset.saturating_sub(u64::from(limit));
            with_window(
                &current,
                limit,
                (previous_offset > 0).then_some(previous_offset),
            )
        });
        Self {
            count: page.count,
            next,
            previous,
            results: page.items.into_iter().map(Into::into).collect(),
        }
    }
}

impl<T> Paginated<T> {
    /// Wraps a page that may have ended early (fewer items than `limit` though more follow, as
    /// a page whose rows passed a byte budget does): `next` starts right after its last item,
    /// with the same `limit`, so paging on loses and repeats nothing. An empty page links on as
    /// [`Paginated::new`] does, so a client never asks for the same page twice.
    pub fn ending_early(
        request: &HttpRequest,
        pagination: Pagination,
        page: Page<impl Into<T>>,
    ) -> Self {
        let served = u64::try_from(page.items.len()).unwrap_or(u64::MAX);
        if served == 0 || served >= u64::from(pagination.limit) {
            return Self::new(request, pagination, page);
        }
        let mut paginated = Self::new(request, pagination, page);
        let after = pagination.offset.saturating_add(served);
        paginated.next = (after < paginated.count)
            .then(|| with_window(&current_url(request), pagination.limit, Some(after)));
        paginated
    }
}

/// `page`/`limit` pagination, as PostHog pages its activity log: `page` from 1, `limit`
/// defaulting to 10. Garbage falls back to defaults (PostHog answers a 500 there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageNumber {
    pub page: u64,
    pub limit: u32,
}

impl PageNumber {
    /// Page size when `limit` is absent or unusable.
    pub const DEFAULT_LIMIT: u32 = 10;

    pub fn from_query(query: &str) -> Self {
        let mut numbered = Self {
            page: 1,
            limit: Self::DEFAULT_LIMIT,
        };
        for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
            match key.as_ref() {
                "limit" => numbered.limit = limit(&value, Self::DEFAULT_LIMIT),
                "page" => numbered.page = value.trim().parse::<u64>().unwrap_or(1).max(1),
                _ => {}
            }
        }
        numbered
    }

    pub fn page_request(self) -> PageRequest {
        PageRequest {
            limit: self.limit,
            offset: (self.page - 1).saturating_mul(u64::from(self.limit)),
        }
    }
}

impl FromRequest for PageNumber {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(request: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(Ok(Self::from_query(request.query_string())))
    }
}

/// A page-numbered list body: `{"results","next","previous","total_count"}`.
#[derive(Debug, Serialize)]
pub struct NumberedPage<T> {
    pub results: Vec<T>,
    pub next: Option<String>,
    pub previous: Option<String>,
    pub total_count: u64,
}

impl<T> NumberedPage<T> {
    /// Wraps one page with absolute links to its neighbours (`page` and `limit` set).
    pub fn new(request: &HttpRequest, numbered: PageNumber, results: Vec<T>, total: u64) -> Self {
        let current = current_url(request);
        let link = |page: u64| {
            with_params(
                &current,
                &[
                    ("page", Some(page.to_string())),
                    ("limit", Some(numbered.limit.to_string())),
                ],
            )
        };
        let seen = numbered.page.saturating_mul(u64::from(numbered.limit));
        Self {
            next: (seen < total).then(|| link(numbered.page + 1)),
            previous: (numbered.page > 1).then(|| link(numbered.page - 1)),
            results,
            total_count: total,
        }
    }
}

/// The absolute URL of this request, with a trailing slash like PostHog's canonical paths.
fn current_url(request: &HttpRequest) -> Url {
    let mut path = request.path().to_owned();
    if !path.ends_with('/') {
        path.push('/');
    }
    let site = request
        .app_data::<ApiSettings>()
        .and_then(|s| s.site_url.clone());
    let base = site.unwrap_or_else(|| {
        let info = request.connection_info();
        Url::parse(&format!("{}://{}", info.scheme(), info.host()))
            .unwrap_or_else(|_| Url::parse("http://localhost").expect("static URL parses"))
    });
    let mut url = base.join(&path).unwrap_or(base);
    url.set_query(Some(request.query_string()).filter(|q| !q.is_empty()));
    url
}

/// `url` with `limit` set, `offset` set or removed, and the query sorted by name.
fn with_window(url: &Url, limit: u32, offset: Option<u64>) -> String {
    with_params(
        url,
        &[
            ("limit", Some(limit.to_string())),
            ("offset", offset.map(|offset| offset.to_string())),
        ],
    )
}

/// `url` with each named parameter set (or removed, for `None`), the query sorted by name.
fn with_params(url: &Url, params: &[(&str, Option<String>)]) -> String {
    let mut pairs: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(key, _)| params.iter().all(|(name, _)| key != name))
        .map(|(key, value)| (key.into_owned(), value.into_owned()))
        .collect();
    pairs.extend(
        params
            .iter()
            .filter_map(|(name, value)| Some(((*name).to_owned(), value.clone()?))),
    );
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    let mut link = url.clone();
    link.query_pairs_mut().clear().extend_pairs(pairs);
    link.to_string()
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    fn page(count: u64) -> Page<u8> {
        Page {
            count,
            items: vec![],
        }
    }

    #[test]
    fn garbage_limits_and_offsets_fall_back_to_defaults() {
        for query in [
            "",
            "limit=abc",
            "limit=0",
            "limit=-5",
            "offset=-1",
            "offset=x",
        ] {
            let pagination = Pagination::from_query(query);
            assert_eq!(pagination.limit, DEFAULT_LIMIT, "{query}");
            assert_eq!(pagination.offset, 0, "{query}");
        }
    }

    #[test]
    fn limits_above_the_maximum_are_capped() {
        assert_eq!(Pagination::from_query("limit=100000").limit, MAX_LIMIT);
        assert_eq!(
            Pagination::from_query("limit=99999999999999").limit,
            MAX_LIMIT
        );
        assert_eq!(
            Pagination::from_query("limit=7&offset=3"),
            Pagination {
                limit: 7,
                offset: 3
            }
        );
    }

    #[test]
    fn next_and_previous_keep_other_parameters_sorted() {
        let request = TestRequest::get()
            .uri("/api/projects/1/surveys?search=Product&limit=10&offset=10")
            .insert_header(("host", "burrow.test"))
            .to_http_request();
        let links = Paginated::<u8>::new(
            &request,
            Pagination::from_query(request.query_string()),
            page(35),
        );
        assert_eq!(
            links.next.as_deref(),
            Some("http://burrow.test/api/projects/1/surveys/?limit=10&offset=20&search=Product")
        );
        assert_eq!(
            links.previous.as_deref(),
            Some("http://burrow.test/api/projects/1/surveys/?limit=10&search=Product")
        );
    }

    #[test]
    fn a_page_that_ended_early_links_on_right_after_its_last_item() {
        let request = TestRequest::get()
            .uri("/api/projects/1/surveys/s/responses/?limit=100&offset=10")
            .insert_header(("host", "burrow.test"))
            .to_http_request();
        let pagination = Pagination::from_query(request.query_string());
        let served = |items: usize, count| Page {
            count,
            items: vec![0_u8; items],
        };
        let links = Paginated::<u8>::ending_early(&request, pagination, served(7, 500));
        assert_eq!(
            links.next.as_deref(),
            Some("http://burrow.test/api/projects/1/surveys/s/responses/?limit=100&offset=17")
        );
        // The last rows: nothing follows.
        assert_eq!(
            Paginated::<u8>::ending_early(&request, pagination, served(7, 17)).next,
            None
        );
        // A full page, or an empty one, links on as any list does.
        for items in [100, 0] {
            assert!(
                Paginated::<u8>::ending_early(&request, pagination, served(items, 500))
                    .next
                    .unwrap()
                    .ends_with("limit=100&offset=110")
            );
        }
    }

    #[test]
    fn previous_carries_the_offset_when_it_is_not_zero_and_next_ends_at_the_count() {
        let request = TestRequest::get()
            .uri("/api/projects/?limit=10&offset=25")
            .to_http_request();
        let links = Paginated::<u8>::new(
            &request,
            Pagination::from_query(request.query_string()),
            page(35),
        );
        assert_eq!(links.next, None);
        assert!(
            links
                .previous
                .unwrap()
                .ends_with("/api/projects/?limit=10&offset=15")
        );
    }

    #[test]
    fn a_single_page_has_no_links() {
        let request = TestRequest::get().uri("/api/projects/").to_http_request();
        let links = Paginated::<u8>::new(&request, Pagination::from_query(""), page(3));
        assert_eq!((links.next, links.previous), (None, None));
    }

    #[test]
    fn the_site_url_replaces_the_request_host() {
        let request = TestRequest::get()
            .uri("/api/projects?offset=0&limit=1")
            .app_data(ApiSettings {
                site_url: Some(Url::parse("https://burrow.example.com").unwrap()),
                ..ApiSettings::default()
            })
            .to_http_request();
        let links = Paginated::<u8>::new(
            &request,
            Pagination::from_query(request.query_string()),
            page(2),
        );
        assert_eq!(
            links.next.as_deref(),
            Some("https://burrow.example.com/api/projects/?limit=1&offset=1")
        );
    }
}
