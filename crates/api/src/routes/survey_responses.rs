//! What a project's surveys were answered: `responses_count`, each survey's responses (PostHog's
//! JSON list, and Burrow's own browsing list), their export and archive, stats, and results per
//! question, all read from the events the capture endpoints stored.

mod archive;
mod browse;
mod counts;
mod deletion;
mod export;
mod list;
mod list_query;
mod query;
mod results;
mod stats;

pub(crate) use archive::{archive, archived_uuids, unarchive};
pub(crate) use browse::{ResponseBody, browse};
pub(crate) use counts::responses_count;
pub(crate) use deletion::{BulkDeleteWrite, DeletedBody, delete, delete_persons, reset};
pub(crate) use export::export;
pub(crate) use list::{ResponseListBody, list};
pub(crate) use results::{ResultsBody, results};
pub(crate) use stats::{StatsBody, project_stats, survey_stats};
