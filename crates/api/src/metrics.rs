//! What operators graph and alert on, in Prometheus' text format at `GET /metrics`: requests by
//! route and status, their latency, the database pool, database failures, rate limiting, and the
//! SDK snapshots (served from memory or built from storage, and whether changes are heard).
//!
//! Each application owns its registry (no process-wide globals), so several apps in one process
//! (the tests) count apart.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::http::header::ContentType;
use actix_web::middleware::Next;
use actix_web::{HttpResponse, web};
use domain::ports::Readiness;
use domain::sdk::SdkService;
use domain::webhook::DispatchCounts;
use prometheus::{
    Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry, TextEncoder, core::Collector,
};

use crate::error::{ApiError, Fault};
use crate::sdk::SnapshotRenderings;

/// The counters of one application. Cheap to clone.
#[derive(Clone)]
pub struct Metrics(Arc<Instruments>);

struct Instruments {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    database_errors: IntCounterVec,
    rate_limited: IntCounter,
    rate_limit_store_errors: IntCounter,
    pool: IntGaugeVec,
    pool_max: IntGauge,
    sdk_snapshots: IntCounterVec,
    sdk_kept: IntGaugeVec,
    sdk_kept_bytes: IntGauge,
    sdk_listening: IntGauge,
    webhook_attempts: IntCounterVec,
    webhook_dropped: IntCounterVec,
    /// Held while counters are brought up to the totals the services keep, so concurrent
    /// scrapes cannot both add the same difference.
    catching_up: Mutex<()>,
}

/// The route label of requests no route matched, so scanners cannot blow up the label set.
const UNMATCHED: &str = "unmatched";

/// The method label: HTTP's standard methods, and `other` for whatever else a client invents
/// (a method is any token, so labelling it verbatim would let one client grow `/metrics`
/// without bound).
fn method_label(method: &Method) -> &'static str {
    const KNOWN: [Method; 9] = [
        Method::GET,
        Method::HEAD,
        Method::POST,
        Method::PUT,
        Method::PATCH,
        Method::DELETE,
        Method::OPTIONS,
        Method::CONNECT,
        Method::TRACE,
    ];
    KNOWN
        .iter()
        .find(|known| *known == method)
        .map_or("other", Method::as_str)
}

impl Metrics {
    /// # Panics
    /// Never in practice: only when two instruments were given the same name, a programming
    /// error the unit test below catches.
    pub fn new() -> Self {
        let registry = Registry::new();
        let counter = |name, help| registered(&registry, IntCounter::new(name, help));
        let gauge = |name, help| registered(&registry, IntGauge::new(name, help));
        let counters = |name, help, labels: &[&str]| {
            registered(&registry, IntCounterVec::new(Opts::new(name, help), labels))
        };
        let gauges = |name, help, label| {
            registered(&registry, IntGaugeVec::new(Opts::new(name, help), &[label]))
        };
        let instruments = Instruments {
            requests: counters(
                "burrow_http_requests_total",
                "HTTP requests answered, by route pattern, method and status.",
                &["method", "route", "status"],
            ),
            latency: registered(
                &registry,
                HistogramVec::new(
                    HistogramOpts::new(
                        "burrow_http_request_duration_seconds",
                        "Time from a request's arrival to its answer, by route pattern and method.",
                    )
                    .buckets(vec![
                        0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                        10.0,
                    ]),
                    &["method", "route"],
                ),
            ),
            database_errors: counters(
                "burrow_database_errors_total",
                "Requests failed by the database: `unavailable` (unreachable, answered 503) or `failed` (answered 500).",
                &["kind"],
            ),
            rate_limited: counter(
                "burrow_rate_limit_rejections_total",
                "Requests refused with 429 because their key was over its rate limit.",
            ),
            rate_limit_store_errors: counter(
                "burrow_rate_limit_store_errors_total",
                "Requests served without rate limiting because the shared counters (Redis) could not be reached.",
            ),
            pool: gauges(
                "burrow_db_pool_connections",
                "Database pool connections: `open`, `idle`, and requests `waiting` for one.",
                "state",
            ),
            pool_max: gauge(
                "burrow_db_pool_max_connections",
                "Most connections this node's pool opens.",
            ),
            sdk_snapshots: counters(
                "burrow_sdk_snapshots_total",
                "SDK requests' project snapshots, by where they came from: `memory` (kept), `storage` (built) or `shared` (taken from another request's build of it).",
                &["source"],
            ),
            sdk_kept: gauges(
                "burrow_sdk_kept_entries",
                "Entries this node keeps for SDK requests, by memory: `tokens` (valid project tokens, pointing at their project) and `snapshots` (projects' flags and surveys).",
                "memory",
            ),
            sdk_kept_bytes: gauge(
                "burrow_sdk_kept_snapshot_bytes",
                "About how many bytes the SDK snapshots this node keeps take (BURROW_SDK_SNAPSHOT_MB bounds it).",
            ),
            sdk_listening: gauge(
                "burrow_sdk_change_listener_up",
                "1 while this node hears PostgreSQL's change notifications and so keeps SDK snapshots.",
            ),
            webhook_attempts: counters(
                "burrow_webhook_attempts_total",
                "Webhook delivery attempts this node made, by outcome: `delivered`, `retried` (failed, tried again later), `failed` (the last attempt of the schedule failed), `gone` (410: the webhook was disabled).",
                &["outcome"],
            ),
            webhook_dropped: counters(
                "burrow_webhook_backlog_dropped_total",
                "Webhook backlog this node's dispatcher dropped because it outgrew its bound, by what: `delivery` (a webhook's oldest pending deliveries), `answer` (a project's oldest answers waiting in the outbox, delivered to none of its webhooks).",
                &["what"],
            ),
            catching_up: Mutex::new(()),
            registry,
        };
        // Both kinds show from the start, so a rate() over them works before the first failure.
        for kind in ["unavailable", "failed"] {
            instruments.database_errors.with_label_values(&[kind]);
        }
        Self(Arc::new(instruments))
    }

    /// A request refused for its key's rate limit.
    pub(crate) fn count_rate_limited(&self) {
        self.0.rate_limited.inc();
    }

    /// A request served unlimited because the counters could not be reached.
    pub(crate) fn count_rate_limit_store_error(&self) {
        self.0.rate_limit_store_errors.inc();
    }

    fn observe(&self, method: &str, route: &str, status: u16, started: Instant) {
        let status = status.to_string();
        self.0
            .requests
            .with_label_values(&[method, route, &status])
            .inc();
        let latency: &Histogram = &self.0.latency.with_label_values(&[method, route]);
        latency.observe(started.elapsed().as_secs_f64());
    }

    fn render(
        &self,
        readiness: &dyn Readiness,
        sdk: &SdkService<SnapshotRenderings>,
        webhooks: &DispatchCounts,
    ) -> String {
        let pool = readiness.connections();
        let gauge = |value: usize| i64::try_from(value).unwrap_or(i64::MAX);
        self.0.pool_max.set(gauge(pool.max));
        for (state, value) in [
            ("open", pool.open),
            ("idle", pool.idle),
            ("waiting", pool.waiting),
        ] {
            self.0.pool.with_label_values(&[state]).set(gauge(value));
        }
        let snapshots = sdk.counts();
        {
            let _one_at_a_time = self
                .0
                .catching_up
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let catch_up = |counters: &IntCounterVec, label: &str, total: u64| {
                let counter = counters.with_label_values(&[label]);
                counter.inc_by(total.saturating_sub(counter.get()));
            };
            for (source, total) in [
                ("memory", snapshots.from_memory),
                ("storage", snapshots.built),
                ("shared", snapshots.shared),
            ] {
                catch_up(&self.0.sdk_snapshots, source, total);
            }
            for (outcome, total) in webhooks.outcomes() {
                catch_up(&self.0.webhook_attempts, outcome, total);
            }
            for (what, total) in webhooks.dropped() {
                catch_up(&self.0.webhook_dropped, what, total);
            }
        }
        self.0.sdk_listening.set(i64::from(snapshots.listening));
        for (memory, entries) in [
            ("tokens", snapshots.tokens_kept),
            ("snapshots", snapshots.snapshots_kept),
        ] {
            let entries = i64::try_from(entries).unwrap_or(i64::MAX);
            self.0.sdk_kept.with_label_values(&[memory]).set(entries);
        }
        self.0
            .sdk_kept_bytes
            .set(i64::try_from(snapshots.snapshot_bytes_kept).unwrap_or(i64::MAX));
        TextEncoder::new()
            .encode_to_string(&self.0.registry.gather())
            .unwrap_or_else(|error| format!("# metrics could not be encoded: {error}\n"))
    }
}

/// `made`, registered in `registry`.
fn registered<C: Collector + Clone + 'static>(
    registry: &Registry,
    made: prometheus::Result<C>,
) -> C {
    let collector = made.expect("valid metric");
    registry
        .register(Box::new(collector.clone()))
        .expect("metric names are unique");
    collector
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

/// Middleware (for `middleware::from_fn`): counts and times every request by the pattern of the
/// route that answered it, and database failures by what the error said.
///
/// # Errors
/// Whatever the inner service returns.
pub(crate) async fn record<B: MessageBody>(
    request: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<B>, actix_web::Error> {
    let started = Instant::now();
    let metrics = request.app_data::<web::Data<Metrics>>().cloned();
    let method = method_label(request.method());
    let response = next.call(request).await?;
    if let Some(metrics) = metrics {
        let route = response.request().match_pattern();
        metrics.observe(
            method,
            route.as_deref().unwrap_or(UNMATCHED),
            response.status().as_u16(),
            started,
        );
        let fault = response
            .response()
            .error()
            .and_then(|error| error.as_error::<ApiError>())
            .and_then(ApiError::fault);
        if let Some(fault) = fault {
            let kind = match fault {
                Fault::Unavailable => "unavailable",
                Fault::Failed => "failed",
            };
            metrics.0.database_errors.with_label_values(&[kind]).inc();
        }
    }
    Ok(response)
}

/// `GET /metrics`.
pub(crate) async fn metrics(
    metrics: web::Data<Metrics>,
    readiness: web::Data<dyn Readiness>,
    sdk: web::Data<SdkService<SnapshotRenderings>>,
    webhooks: web::Data<DispatchCounts>,
) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(ContentType(
            "text/plain; version=0.0.4; charset=utf-8"
                .parse()
                .expect("static media type"),
        ))
        .body(metrics.render(readiness.get_ref(), &sdk, &webhooks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_instrument_registers() {
        let metrics = Metrics::new();
        metrics.count_rate_limited();
        metrics.observe("GET", "/api/projects", 200, Instant::now());
        let text = TextEncoder::new()
            .encode_to_string(&metrics.0.registry.gather())
            .unwrap();
        assert!(text.contains("burrow_rate_limit_rejections_total 1"));
        assert!(text.contains(
            r#"burrow_http_requests_total{method="GET",route="/api/projects",status="200"} 1"#
        ));
    }
}
