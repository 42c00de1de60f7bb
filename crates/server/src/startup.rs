//! The composition root: PostgreSQL adapters in, HTTP server out.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix_web::HttpServer;
use actix_web::dev::Server;
use adapters::{
    BlockingEvaluationSlots, Database, HttpPluginUpstream, HttpWebhookSender, LocalRateCounters,
    MokaMemories, MokaPatterns, OxcSourceAnalyzer, PgApiKeyRepository, PgCohortRepository,
    PgDeliveryQueue, PgEarlyAccessRepository, PgFeatureFlagRepository, PgGroupRepository,
    PgPersonRepository, PgPluginConfigRepository, PgPluginRepository, PgSurveyRepository,
    PgSurveyResponseRepository, PgTenancyRepository, PgWebhookRepository, PoolSettings,
    RedisRateCounters, Replica, SenderSettings, SystemResolver, UpstreamSettings,
    listen_for_sdk_changes,
};
use anyhow::Context as _;
use domain::access::AccessService;
use domain::cohort::CohortService;
use domain::early_access::EarlyAccessService;
use domain::feature_flag::FeatureFlagService;
use domain::group::GroupService;
use domain::plugin::{PluginService, PluginSettings};
use domain::plugin_config::PluginConfigService;
use domain::rate_limit::{RateCounters, RateLimiter};
use domain::sdk::{SdkService, SnapshotInvalidation, SnapshotSettings, SnapshotSources};
use domain::survey::{RenderedSurveys, SurveyService};
use domain::survey_response::{SurveyResponseRepository, SurveyResponseService};
use domain::tenancy::ProjectService;
use domain::webhook::{
    DispatchCounts, DispatchSettings, QueueBounds, RetrySchedule, TargetPolicy, WebhookDispatcher,
    WebhookService,
};
use futures_util::FutureExt as _;
use futures_util::future::{BoxFuture, join_all};

use crate::cli::{PluginArgs, ServeArgs, WebhookArgs};

/// A bound, not yet running server.
pub struct Application {
    port: u16,
    server: Server,
    /// What runs beside the server while it serves: the listener that hears what changes SDK
    /// snapshots (when they are kept), the webhook dispatcher (when this node sends) and the
    /// survey schedule rounds.
    background: Vec<BoxFuture<'static, ()>>,
}

impl Application {
    /// Connects the pool, wires the services and binds the listener (port 0 picks a free one).
    ///
    /// # Errors
    /// When the address cannot be bound or the pool cannot be built.
    pub fn build(args: &ServeArgs) -> anyhow::Result<Self> {
        let workers = args.workers.unwrap_or_else(cores);
        let pool_size = args.db_pool_size.unwrap_or_else(default_pool_size);
        let database = Database::connect(
            &args.database.database_url,
            PoolSettings {
                max_size: pool_size,
                timeout: Duration::from_millis(args.db_timeout_ms),
                // Each worker uses connections of its own (claimed below).
                partitions: workers,
            },
        )?;
        // Statistics and exports are rare next to the SDK's traffic: a quarter of the pool.
        let replica = args
            .replica_database_url
            .as_deref()
            .map(|url| {
                Replica::connect(
                    url,
                    PoolSettings {
                        max_size: (pool_size / 4).max(2),
                        timeout: Duration::from_millis(args.db_timeout_ms),
                        partitions: 1,
                    },
                )
                .context("BURROW_REPLICA_DATABASE_URL")
            })
            .transpose()?;
        let claims = database.clone();
        let survey_responses = Arc::new(PgSurveyResponseRepository::new(database.clone()));
        let webhooks = Webhooks::new(database.clone(), &args.webhooks)?;
        let services = services(database.clone(), args, &webhooks, replica.clone())?;
        let mut background = Vec::new();
        if let Some(replica) = replica {
            let max_lag = Duration::from_millis(args.replica_max_lag_ms);
            background.push(replica.watch(database.clone(), max_lag).boxed());
        }
        if services.sdk.keeps_snapshots() {
            let invalidation: Arc<dyn SnapshotInvalidation> = services.sdk.clone();
            background.push(listen_for_sdk_changes(database, invalidation).boxed());
        }
        if args.webhooks.dispatch {
            background.push(webhooks.dispatch(&args.webhooks).boxed());
        }
        background.push(
            advance_survey_rounds(
                services.surveys.clone(),
                survey_responses,
                Duration::from_secs(args.survey_schedule_secs),
            )
            .boxed(),
        );
        let settings = api::ApiSettings {
            site_url: args.site_url.clone(),
            max_body_bytes: args.max_body_bytes,
            capture_max_body_bytes: args.capture_max_body_bytes,
            capture_max_events: args.capture_max_events,
            sdk_max_age_secs: args.sdk.max_age_secs,
            body_budget: api::BodyBudget::new(
                usize::try_from(args.body_memory_mb)
                    .unwrap_or(usize::MAX)
                    .saturating_mul(1024 * 1024),
            ),
            static_assets: args
                .static_dir
                .as_deref()
                .map(api::StaticAssets::open)
                .transpose()
                .context("reading BURROW_STATIC_DIR")?,
        };
        let listener =
            TcpListener::bind(args.bind).with_context(|| format!("binding {}", args.bind))?;
        let port = listener.local_addr()?.port();
        let metrics = api::Metrics::new();
        // The factory runs once on each worker's thread as it starts.
        let server = HttpServer::new(move || {
            claims.claim_partition();
            api::app(services.clone(), settings.clone(), metrics.clone())
        })
        // On SIGTERM/SIGINT: stop accepting, give in-flight requests this long to finish.
        .shutdown_timeout(args.shutdown_timeout_secs)
        .workers(workers);
        let server = server
            .client_request_timeout(Duration::from_secs(30))
            .listen(listener)?
            .run();
        Ok(Self {
            port,
            server,
            background,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Serves until a shutdown signal, then drains in-flight requests.
    ///
    /// # Errors
    /// When the server fails.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let background: Vec<_> = self.background.into_iter().map(tokio::spawn).collect();
        let served = self.server.await;
        // A delivery cut off mid-send stays claimed until its lease ends, then is sent again.
        for task in background {
            task.abort();
        }
        served
    }
}

/// The webhook adapters, shared by the API's service and this node's dispatcher.
struct Webhooks {
    store: Arc<PgWebhookRepository>,
    queue: Arc<PgDeliveryQueue>,
    sender: Arc<HttpWebhookSender>,
    policy: TargetPolicy,
    counts: Arc<DispatchCounts>,
}

impl Webhooks {
    fn new(database: Database, args: &WebhookArgs) -> anyhow::Result<Self> {
        let policy = TargetPolicy {
            allow_private: args.allow_private,
            ports: args.allowed_ports.clone().unwrap_or_default(),
        };
        Ok(Self {
            store: Arc::new(PgWebhookRepository::new(database.clone())),
            queue: Arc::new(PgDeliveryQueue::new(database)),
            sender: Arc::new(
                HttpWebhookSender::new(SenderSettings {
                    policy: policy.clone(),
                    timeout: Duration::from_secs(args.timeout_secs),
                })
                .context("building the webhook sender")?,
            ),
            policy,
            counts: Arc::default(),
        })
    }

    fn service(&self) -> WebhookService {
        WebhookService::new(
            self.store.clone(),
            Arc::new(SystemResolver),
            self.sender.clone(),
            self.policy.clone(),
        )
    }

    /// Runs this node's dispatcher for as long as the server runs, in loops that each go again
    /// at once while they find work, else after the poll interval: one fans captured answers out
    /// (purges deleted webhooks' deliveries, and hourly forgets finished ones), so slow receivers
    /// never hold answers back from becoming deliveries; [`SENDING_LOOPS`] send what is due, each
    /// claiming its own rounds, so a round held up by slow receivers (up to the timeout) delays
    /// only its own loop while the others claim what is due meanwhile, other projects' first.
    fn dispatch(&self, args: &WebhookArgs) -> impl Future<Output = ()> + Send + 'static {
        let timeout = Duration::from_secs(args.timeout_secs);
        let dispatcher = Arc::new(WebhookDispatcher::new(
            self.queue.clone(),
            self.sender.clone(),
            DispatchSettings {
                batch: WEBHOOK_BATCH,
                bounds: QueueBounds::default(),
                // Longer than an attempt can take, so a live node settles before its lease ends.
                lease: timeout + Duration::from_secs(30),
                schedule: args
                    .retry_delays
                    .clone()
                    .map_or_else(RetrySchedule::default, |delays| {
                        RetrySchedule::new(delays.0)
                    }),
                retention: Duration::from_secs(u64::from(args.retention_days) * 24 * 3600),
            },
            self.counts.clone(),
        ));
        let poll = Duration::from_millis(args.poll_ms);
        let fanning = dispatcher.clone();
        let mut pruned: Option<Instant> = None;
        let fan_out = rounds(poll, "fanning webhook deliveries out", async move || {
            if pruned.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
                pruned = Some(Instant::now());
                if let Err(error) = fanning.forget_finished().await {
                    tracing::warn!(error = %error, "forgetting finished webhook deliveries");
                }
            }
            fanning.fan_out().await.map(|fanned| fanned > 0)
        });
        let sending = (0..SENDING_LOOPS).map(move |_| {
            let dispatcher = dispatcher.clone();
            rounds(poll, "sending webhook deliveries", async move || {
                dispatcher.send_due().await.map(|sent| sent > 0)
            })
        });
        futures_util::future::join(fan_out, join_all(sending)).map(|_| ())
    }
}

/// Runs `round` for ever: again at once while it finds work, else after `poll` (a failure,
/// logged as `what`, finds none).
async fn rounds(
    poll: Duration,
    what: &'static str,
    mut round: impl AsyncFnMut() -> Result<bool, domain::Unexpected>,
) {
    loop {
        pause_after(round().await, what, poll).await;
    }
}

/// After a round: logs its failure as `what`, and waits `poll` unless it found work.
async fn pause_after(round: Result<bool, domain::Unexpected>, what: &'static str, poll: Duration) {
    let busy = round.unwrap_or_else(|error| {
        tracing::warn!(error = %error, "{what}");
        false
    });
    if !busy {
        tokio::time::sleep(poll).await;
    }
}

/// Moves recurring surveys' schedules on, and sets sampling surveys' daily rollout from their
/// `responses`, for as long as the server runs: again at once while a round moved some, else
/// after `poll`. Its own loop rather than [`rounds`]: rustc cannot prove the future an async
/// closure would lend for these rounds `Send` for every lifetime of the closure's borrow.
async fn advance_survey_rounds(
    surveys: Arc<SurveyService>,
    responses: Arc<dyn SurveyResponseRepository>,
    poll: Duration,
) {
    loop {
        let round = survey_round(surveys.clone(), responses.clone()).await;
        pause_after(round, "advancing survey schedules", poll).await;
    }
}

/// One round of [`advance_survey_rounds`]: whether it moved any survey.
async fn survey_round(
    surveys: Arc<SurveyService>,
    responses: Arc<dyn SurveyResponseRepository>,
) -> Result<bool, domain::Unexpected> {
    let now = chrono::Utc::now();
    let moved = surveys.advance_schedules(now).await?;
    let sampled = surveys
        .advance_response_sampling(responses.as_ref(), now)
        .await?;
    Ok(moved + sampled > 0)
}

/// How often a node forgets deliveries past their retention.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// A node's sending loops, each with rounds of its own.
const SENDING_LOOPS: usize = 4;

/// Deliveries one round of a sending loop claims and sends concurrently (each to a different
/// webhook): with [`SENDING_LOOPS`], at most 32 in flight a node.
const WEBHOOK_BATCH: u32 = 8;

fn services(
    database: Database,
    args: &ServeArgs,
    webhooks: &Webhooks,
    replica: Option<Arc<Replica>>,
) -> anyhow::Result<api::Services> {
    let plugins = &args.plugins;
    let keys = Arc::new(PgApiKeyRepository::new(database.clone()));
    let tenancy = Arc::new(PgTenancyRepository::new(database.clone()));
    let flags = Arc::new(PgFeatureFlagRepository::new(database.clone()));
    let cohorts = Arc::new(PgCohortRepository::new(database.clone()));
    let flag_service = Arc::new(FeatureFlagService::new(flags.clone(), cohorts.clone()));
    let survey_store = Arc::new(PgSurveyRepository::new(database.clone()));
    let surveys = Arc::new(SurveyService::new(survey_store.clone(), cohorts.clone()));
    let rendered_surveys = Arc::new(RenderedSurveys::new(
        survey_store,
        api::SurveyJson::render,
        &MokaMemories,
    ));
    let persons = Arc::new(PgPersonRepository::new(database.clone()));
    let groups = Arc::new(PgGroupRepository::new(database.clone()));
    let plugin_store = Arc::new(PgPluginRepository::new(database.clone()));
    let upstream = Arc::new(HttpPluginUpstream::new(upstream_settings(plugins))?);
    Ok(api::Services {
        access: Arc::new(AccessService::new(
            keys,
            tenancy.clone(),
            Duration::from_millis(args.access_cache_ms),
            &MokaMemories,
        )),
        projects: Arc::new(ProjectService::new(tenancy.clone())),
        rate_limiter: Arc::new(rate_limiter(args)?),
        flags: flag_service.clone(),
        cohorts: Arc::new(CohortService::new(cohorts.clone(), flags.clone())),
        groups: Arc::new(GroupService::new(groups.clone())),
        early_access: Arc::new(EarlyAccessService::new(
            Arc::new(PgEarlyAccessRepository::new(database.clone())),
            flag_service,
        )),
        rendered_surveys,
        sdk: Arc::new(SdkService::new(
            SnapshotSources {
                tenancy: tenancy.clone(),
                flags,
                cohorts,
                groups,
                surveys: surveys.clone(),
                persons,
                patterns: Arc::new(MokaPatterns::default()),
                slots: Arc::new(BlockingEvaluationSlots::per_core()),
            },
            SnapshotSettings {
                enabled: args.sdk.snapshot,
                budget_bytes: args.sdk.snapshot_mb.saturating_mul(1024 * 1024),
            },
            &MokaMemories,
        )),
        plugins: Arc::new(PluginService::new(
            plugin_store.clone(),
            upstream,
            Arc::new(OxcSourceAnalyzer),
            PluginSettings {
                posthog_version: plugins.posthog_version.clone(),
            },
        )),
        plugin_configs: Arc::new(PluginConfigService::new(
            Arc::new(PgPluginConfigRepository::new(database.clone())),
            plugin_store,
        )),
        survey_responses: Arc::new(SurveyResponseService::new(
            Arc::new(match replica {
                Some(replica) => {
                    PgSurveyResponseRepository::new(database.clone()).with_replica(replica)
                }
                None => PgSurveyResponseRepository::new(database.clone()),
            }),
            surveys.clone(),
        )),
        surveys,
        webhooks: Arc::new(webhooks.service()),
        webhook_counts: webhooks.counts.clone(),
        readiness: Arc::new(database),
    })
}

/// The configured limit, counted in Redis when one is configured, else in this process.
fn rate_limiter(args: &ServeArgs) -> anyhow::Result<RateLimiter> {
    let counters: Arc<dyn RateCounters> = match &args.redis_url {
        Some(url) => Arc::new(RedisRateCounters::new(url)?),
        None => {
            let longest = args.rate_limit.windows().iter().map(|w| w.period).max();
            Arc::new(LocalRateCounters::new(longest.unwrap_or_default()))
        }
    };
    Ok(RateLimiter::new(args.rate_limit.clone(), counters))
}

/// Four connections per core. A read holds its connection only while its statements run, and
/// past a few busy backends per core PostgreSQL spends its time switching between them; a write
/// also holds one while its commit is flushed, which more connections overlap. On two cores
/// shared with the database, 8 served reads as fast as 4 and writes faster, with less memory than
/// 16 (`docs/benchmarks.md`). Several nodes on one database add theirs up; see operations.
fn default_pool_size() -> usize {
    cores() * 4
}

/// The cores this process may run on: as many HTTP workers by default, as actix-web would
/// start.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, std::num::NonZero::get)
}

fn upstream_settings(plugins: &PluginArgs) -> UpstreamSettings {
    UpstreamSettings {
        github_api_url: plugins.github_api_url.clone(),
        github_url: plugins.github_url.clone(),
        github_codeload_url: plugins.github_codeload_url.clone(),
        gitlab_url: plugins.gitlab_url.clone(),
        npm_registry_url: plugins.npm_registry_url.clone(),
        repository_url: plugins.repository_url.clone(),
        github_token: plugins.github_token.clone(),
        gitlab_token: plugins.gitlab_token.clone(),
        npm_token: plugins.npm_token.clone(),
        local_dir: plugins.local_dir.clone(),
        timeout: Duration::from_secs(plugins.timeout_secs),
        max_archive_bytes: plugins.max_archive_bytes,
        ..UpstreamSettings::default()
    }
}
