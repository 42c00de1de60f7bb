//! The bench's own PostgreSQL: a throwaway cluster under `target/bench/postgres`, made anew on
//! every run with the installed `initdb`, on a free port, with `pg_stat_statements` preloaded so
//! the bench can count the SQL statements each request costs. A cluster of its own means the
//! counts hold only what this run's Burrow and pgbench sent, never another program's queries on
//! a shared server.
//!
//! It is stopped however the bench ends (the stop is in `Drop`), and its data stays in place, so
//! the scripts in `target/bench/` can be rerun after `pg_ctl start -D target/bench/postgres/data`
//! (its settings, the port included, are in its `postgresql.conf`).

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context as _;

use super::database::psql;
use crate::{postgres, run};

/// Counted per execution, top-level statements only (a statement inside a function is part of
/// the one that called it); `BEGIN` and `COMMIT` count, as the round trips they are.
const SETTINGS: &str = "\
shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.track = top
pg_stat_statements.track_utility = on
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
";

pub(super) struct Cluster {
    pg_ctl: PathBuf,
    data: PathBuf,
    port: u16,
    as_root: bool,
}

impl Cluster {
    /// Makes a cluster in `dir` (removing what an earlier run left there) and starts it.
    pub(super) fn start(dir: &Path) -> anyhow::Result<Self> {
        let initdb = postgres::pg_binary("initdb")
            .context("initdb not found; install PostgreSQL (Debian: apt-get install postgresql)")?;
        let pg_ctl = postgres::pg_binary("pg_ctl").context("pg_ctl not found next to initdb")?;
        let as_root = postgres::is_root();
        let data = dir.join("data");
        if data.join("postmaster.pid").exists() {
            // An earlier run that was killed before its `Drop` left its server running.
            let _ = postgres::as_postgres(&pg_ctl, as_root)
                .args(["stop", "-m", "immediate", "-D"])
                .arg(&data)
                .output();
        }
        if dir.exists() {
            fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
        }
        fs::create_dir_all(dir)?;
        if as_root {
            run(Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir))?;
        }
        run(postgres::as_postgres(&initdb, as_root)
            .args([
                "--auth=trust",
                "--username=postgres",
                "--encoding=UTF8",
                "--no-sync",
                "-D",
            ])
            .arg(&data))?;
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let conf = data.join("postgresql.conf");
        let mut settings = fs::read_to_string(&conf)?;
        settings.push_str("\n# cargo xtask bench\n");
        settings.push_str(SETTINGS);
        settings.push_str(&format!("port = {port}\n"));
        fs::write(&conf, settings).with_context(|| format!("writing {}", conf.display()))?;
        let cluster = Self {
            pg_ctl,
            data,
            port,
            as_root,
        };
        run(postgres::as_postgres(&cluster.pg_ctl, as_root)
            .args(["start", "-w", "-t", "60", "-D"])
            .arg(&cluster.data)
            .arg("-l")
            .arg(dir.join("postgres.log")))?;
        // In the maintenance database, not the bench's: the bench's own queries of the view
        // then never count among the bench database's statements.
        psql(
            &cluster.database_url("postgres"),
            "CREATE EXTENSION pg_stat_statements",
        )?;
        Ok(cluster)
    }

    pub(super) fn database_url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// Forgets every statement counted so far.
    pub(super) fn reset_statements(&self) -> anyhow::Result<()> {
        psql(
            &self.database_url("postgres"),
            "SELECT pg_stat_statements_reset()",
        )?;
        Ok(())
    }

    /// Statements executed in `database` since the last reset.
    pub(super) fn statements(&self, database: &str) -> anyhow::Result<u64> {
        let sum = psql(
            &self.database_url("postgres"),
            &format!(
                "SELECT coalesce(sum(s.calls), 0) FROM pg_stat_statements s \
                 JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = '{database}'"
            ),
        )?;
        sum.parse()
            .with_context(|| format!("reading pg_stat_statements' sum of calls {sum:?}"))
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if !self.data.join("postmaster.pid").exists() {
            return;
        }
        let stopped = postgres::as_postgres(&self.pg_ctl, self.as_root)
            .args(["stop", "-m", "fast", "-w", "-D"])
            .arg(&self.data)
            .output();
        if !stopped.is_ok_and(|output| output.status.success()) {
            eprintln!(
                "xtask: bench: could not stop the bench's PostgreSQL; stop it with pg_ctl stop -D {}",
                self.data.display()
            );
        }
    }
}
