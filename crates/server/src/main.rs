//! `burrow`: serve the API, migrate the database, or run an admin command.

use std::process::ExitCode;

use burrow_server::cli::{Cli, Command, LogFormat};
use burrow_server::{admin, startup::Application};
use clap::Parser as _;
use tracing_subscriber::EnvFilter;

/// jemalloc hands memory back to the system a few seconds after a burst (its dirty-page decay),
/// where glibc's allocator kept what a burst of capture batches grew the heap to; `serve` turns
/// on its background thread so that happens on an idle node too; see `docs/benchmarks.md`.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Logs go to stderr so admin commands' JSON on stdout stays machine-readable.
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info"))
        // tokio-postgres logs each statement's parameters at debug (a project token among
        // them, as bytes): secrets never reach a log, whatever RUST_LOG asks for.
        .add_directive("tokio_postgres=info".parse().expect("static directive"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match cli.log_format {
        LogFormat::Text => logs.init(),
        // The request's span (its id, method, path, route) goes into every line it logs.
        LogFormat::Json => logs
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .init(),
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve(args) => actix_web::rt::System::new().block_on(async move {
            // Without it, pages freed after a burst are purged only when the same arena
            // allocates again: a node that served one big capture batch and then went quiet kept
            // the batch's peak (a 2,000-event batch: 30 → 45 MiB, back to 34 MiB with it).
            if let Err(error) = tikv_jemalloc_ctl::background_thread::write(true) {
                tracing::warn!(%error, "jemalloc's background purging is not available");
            }
            let app = Application::build(&args)?;
            tracing::info!(bind = %args.bind, port = app.port(), "burrow is serving");
            app.run_until_stopped().await?;
            tracing::info!("burrow stopped");
            Ok(())
        }),
        Command::Migrate(args) => tokio_runtime()?.block_on(async move {
            if args.create_database
                && adapters::ensure_database_exists(&args.database.database_url).await?
            {
                eprintln!("created the database");
            }
            let applied = adapters::run_migrations(&args.database.database_url).await?;
            if applied.is_empty() {
                eprintln!("migrations: already up to date");
            } else {
                eprintln!("migrations: applied {}", applied.join(", "));
            }
            Ok(())
        }),
        Command::Admin(args) => tokio_runtime()?.block_on(async move {
            let output = admin::run(args).await?;
            println!("{output}");
            Ok(())
        }),
    }
}

fn tokio_runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}
