//! The survey response port, faked: events deduplicated by uuid, one response per submission,
//! person and group sets merged and webhook deliveries made under the same lock (so a capture is all or
//! nothing here too), counts and stats computed from them directly, by the port's rules
//! (`rules.rs`).

mod merging;
mod rules;

use std::collections::{BTreeMap, BTreeSet};

use async_trait::async_trait;
use uuid::Uuid;

use crate::activity::NewActivity;
use crate::error::Unexpected;
use crate::group::GroupSet;
use crate::person::{PersonSet, ProfileSets, merge_set};
use crate::ports::{Page, PageRequest};
use crate::survey::SurveyId;
use crate::survey_response::{
    AnswerFilter, CountFilter, DateWindow, EventAggregate, ExportCursor, Forgotten,
    MAX_ANSWER_BYTES, ResponseCounts, ResponseFilter, ResponseSlice, SliceRequest, StatsAggregates,
    SubmissionDraft, SurveyEvent, SurveyEventKind, SurveyResponse, SurveyResponseRepository,
    Tallies, Tally, TallyRequest, rows_within,
};
use crate::tenancy::ProjectId;

use super::{InMemoryStore, State, page_of};
use merging::merged;
use rules::{answer, is_answered, keeps, ranked, tallied_values};

/// A stored response and what it belongs to.
#[derive(Debug, Clone)]
pub(super) struct StoredResponse {
    project: ProjectId,
    survey_id: String,
    submission_key: String,
    response: SurveyResponse,
}

impl State {
    /// Stops each of these surveys whose responses reached its `responses_limit`, as the
    /// capture statement does: `end_date` now, the limit cleared.
    fn stop_surveys_at_their_limit(&mut self, project: ProjectId, grown: &BTreeSet<String>) {
        for survey_id in grown {
            let responses = self
                .survey_responses
                .iter()
                .filter(|s| s.project == project && &s.survey_id == survey_id)
                .count();
            let Some(survey) = self
                .surveys
                .iter_mut()
                .find(|s| s.project_id == project && &s.id.0.to_string() == survey_id)
            else {
                continue;
            };
            let state = &mut survey.state;
            if state.end_date.is_none()
                && state.responses_limit.is_some_and(|limit| {
                    i64::try_from(responses).unwrap_or(i64::MAX) >= i64::from(limit)
                })
            {
                state.end_date = Some(chrono::Utc::now());
                state.responses_limit = None;
            }
        }
    }

    /// Deletes the project's responses and events the predicates pick (a response by its survey
    /// id, submission key and itself), with their pending webhook deliveries; counts are read
    /// from the responses, so they follow.
    fn forget(
        &mut self,
        project: ProjectId,
        response: impl Fn(&str, &str, &SurveyResponse) -> bool,
        event: impl Fn(&SurveyEvent) -> bool,
    ) -> Forgotten {
        let before = self.survey_responses.len();
        self.survey_responses.retain(|stored| {
            !(stored.project == project
                && response(&stored.survey_id, &stored.submission_key, &stored.response))
        });
        let responses = (before - self.survey_responses.len()) as u64;
        let mut gone = Vec::new();
        self.survey_events.retain(|(p, e)| {
            let forget = *p == project && event(e);
            if forget {
                gone.push(e.uuid);
            }
            !forget
        });
        self.drop_pending_deliveries(project, &gone);
        Forgotten {
            persons: 0,
            events: gone.len() as u64,
            responses,
        }
    }

    /// A survey's responses that `filter` keeps, in no order.
    fn kept_responses<'a>(
        &'a self,
        project: ProjectId,
        survey_id: &'a str,
        filter: &'a ResponseFilter,
    ) -> impl Iterator<Item = &'a SurveyResponse> {
        self.survey_responses
            .iter()
            .filter(move |s| s.project == project && s.survey_id == survey_id)
            .map(|s| &s.response)
            .filter(|r| filter.window.contains(r.timestamp))
            .filter(|r| !(filter.exclude_archived && r.archived))
    }

    fn response_of(&self, project: ProjectId, survey_id: &str, key: &str) -> Option<usize> {
        self.survey_responses.iter().position(|stored| {
            stored.project == project
                && stored.survey_id == survey_id
                && stored.submission_key == key
        })
    }
}

/// A response as lists read it (the port's rule): each answer longer than [`MAX_ANSWER_BYTES`]
/// (a text answer's text, another answer's JSON text) cut to a string of its first
/// `MAX_ANSWER_BYTES` characters.
fn as_read(response: &SurveyResponse) -> SurveyResponse {
    let mut read = response.clone();
    for answer in read.answers.values_mut() {
        let cut =
            |text: &str| serde_json::Value::String(text.chars().take(MAX_ANSWER_BYTES).collect());
        match answer {
            serde_json::Value::String(text) if text.len() > MAX_ANSWER_BYTES => *answer = cut(text),
            serde_json::Value::String(_) => {}
            other => {
                let text = other.to_string();
                if text.len() > MAX_ANSWER_BYTES {
                    *other = cut(&text);
                }
            }
        }
    }
    read
}

/// The first of `responses` (in list order) whose answers, as read, fit `answer_bytes` (the
/// port's rule, [`rows_within`]).
fn within_budget(responses: Vec<SurveyResponse>, answer_bytes: usize) -> Vec<SurveyResponse> {
    let sizes = responses
        .iter()
        .map(|response| serde_json::to_string(&response.answers).map_or(0, |text| text.len()));
    let kept = rows_within(sizes, answer_bytes);
    responses.into_iter().take(kept).collect()
}

/// The first of `responses` (in list order) whose answers and contexts, as read, fit
/// `answer_bytes`, as a slice reads them.
fn slice_within_budget(responses: Vec<SurveyResponse>, answer_bytes: usize) -> Vec<SurveyResponse> {
    let sizes = responses.iter().map(|response| {
        let text = |value: &serde_json::Map<String, serde_json::Value>| {
            serde_json::to_string(value).map_or(0, |text| text.len())
        };
        text(&response.answers) + text(&response.context.to_stored())
    });
    let kept = rows_within(sizes, answer_bytes);
    responses.into_iter().take(kept).collect()
}

fn aggregate<'a>(
    items: impl Iterator<Item = (&'a str, chrono::DateTime<chrono::Utc>)>,
) -> EventAggregate {
    let mut persons = BTreeSet::new();
    let mut aggregate = EventAggregate::default();
    for (person, at) in items {
        persons.insert(person);
        aggregate.total_count += 1;
        aggregate.first_seen = Some(aggregate.first_seen.map_or(at, |first| first.min(at)));
        aggregate.last_seen = Some(aggregate.last_seen.map_or(at, |last| last.max(at)));
    }
    aggregate.unique_persons = persons.len() as u64;
    aggregate
}

#[async_trait]
impl SurveyResponseRepository for InMemoryStore {
    async fn record(
        &self,
        project: ProjectId,
        events: Vec<SurveyEvent>,
        sets: ProfileSets,
    ) -> Result<usize, Unexpected> {
        let mut state = self.lock();
        // One write merges each person's and group's sets into one before storing it, as the
        // statement does, so the size bound weighs them together.
        let mut persons: Vec<PersonSet> = Vec::new();
        for set in sets.persons {
            match persons
                .iter_mut()
                .find(|p| p.distinct_id == set.distinct_id)
            {
                Some(merged) => merge_set(&mut merged.properties, set.properties),
                None => persons.push(set),
            }
        }
        let mut groups: Vec<GroupSet> = Vec::new();
        for set in sets.groups {
            match groups
                .iter_mut()
                .find(|g| g.group_type == set.group_type && g.group_key == set.group_key)
            {
                Some(merged) => merged.properties.extend(set.properties),
                None => groups.push(set),
            }
        }
        for set in &persons {
            state.merge_person(project, set);
        }
        for set in &groups {
            state.merge_group(project, set);
        }
        let mut stored = 0;
        // For the webhook outbox: the new sends, and the responses this call created.
        let mut sends = Vec::new();
        let mut created = BTreeSet::new();
        // The submissions some of whose response events are new.
        let mut answered = BTreeSet::new();
        for event in &events {
            if state
                .survey_events
                .iter()
                .any(|(p, e)| *p == project && e.uuid == event.uuid)
            {
                continue;
            }
            state.survey_events.push((project, event.clone()));
            stored += 1;
            if event.is_response() {
                answered.insert((event.survey_id.clone(), event.submission_key()));
            }
            if event.kind == SurveyEventKind::Sent {
                sends.push(event.clone());
            }
        }
        // As the statement does: one copy of each uuid, each answered submission's events of
        // this capture merged, then merged into its response.
        let mut unique = BTreeSet::new();
        let batch: Vec<&SurveyEvent> = events.iter().filter(|e| unique.insert(e.uuid)).collect();
        for draft in SubmissionDraft::of_events(batch) {
            let key = (draft.survey_id.clone(), draft.submission_key.clone());
            if !answered.contains(&key) {
                continue;
            }
            match state.response_of(project, &key.0, &key.1) {
                Some(index) => {
                    let current = &mut state.survey_responses[index].response;
                    *current = merged(draft, Some(current));
                }
                None => {
                    created.insert(key.clone());
                    state.survey_responses.push(StoredResponse {
                        project,
                        survey_id: key.0,
                        submission_key: key.1,
                        response: merged(draft, None),
                    });
                }
            }
        }
        let grown: BTreeSet<String> = created.iter().map(|(survey, _)| survey.clone()).collect();
        state.stop_surveys_at_their_limit(project, &grown);
        state.write_outbox(project, sends, &created);
        Ok(stored)
    }

    async fn counts(
        &self,
        project: ProjectId,
        filter: &CountFilter,
    ) -> Result<ResponseCounts, Unexpected> {
        let state = self.lock();
        let Some(since) = state
            .surveys
            .iter()
            .filter(|s| s.project_id == project)
            .filter_map(|s| s.state.start_date)
            .min()
        else {
            return Ok(ResponseCounts::new());
        };
        let mut counts = BTreeMap::new();
        for stored in &state.survey_responses {
            let wanted = stored.project == project
                && stored.response.timestamp >= since
                && !(filter.exclude_archived && stored.response.archived)
                && filter
                    .survey_ids
                    .as_ref()
                    .is_none_or(|ids| ids.contains(&stored.survey_id));
            if wanted {
                *counts.entry(stored.survey_id.clone()).or_insert(0) += 1;
            }
        }
        Ok(counts)
    }

    async fn responses(
        &self,
        project: ProjectId,
        survey_id: &str,
        filter: &ResponseFilter,
        answers: &AnswerFilter,
        page: PageRequest,
        answer_bytes: usize,
    ) -> Result<Page<SurveyResponse>, Unexpected> {
        let state = self.lock();
        let mut responses: Vec<&SurveyResponse> = state
            .kept_responses(project, survey_id, filter)
            .filter(|r| keeps(answers, &r.answers))
            .collect();
        responses.sort_by_key(|r| std::cmp::Reverse((r.timestamp, r.uuid)));
        let page = page_of(responses, page).map(as_read);
        Ok(Page {
            count: page.count,
            items: within_budget(page.items, answer_bytes),
        })
    }

    async fn slice(
        &self,
        project: ProjectId,
        survey_id: &str,
        request: &SliceRequest,
        answer_bytes: usize,
    ) -> Result<ResponseSlice, Unexpected> {
        let state = self.lock();
        let filter = ResponseFilter {
            window: request.window,
            exclude_archived: request.exclude_archived,
        };
        let mut responses: Vec<&SurveyResponse> = state
            .kept_responses(project, survey_id, &filter)
            .filter(|r| match &request.question {
                None => true,
                Some(keys) => answer(keys, &r.answers)
                    .is_some_and(|a| is_answered(a) && request.score.contains(a)),
            })
            .collect();
        responses.sort_by_key(|r| std::cmp::Reverse((r.timestamp, r.uuid)));
        let offset = usize::try_from(request.offset).unwrap_or(usize::MAX);
        let limit = request.limit as usize;
        let past_offset = responses.len().saturating_sub(offset);
        let asked: Vec<SurveyResponse> = responses
            .into_iter()
            .skip(offset)
            .take(limit)
            .map(as_read)
            .collect();
        let asked_len = asked.len();
        let kept = slice_within_budget(asked, answer_bytes);
        let cut_short = kept.len() < asked_len;
        Ok(ResponseSlice {
            has_more: cut_short || past_offset > limit,
            cut_short,
            responses: kept,
        })
    }

    async fn tallies(
        &self,
        project: ProjectId,
        survey_id: &str,
        filter: &ResponseFilter,
        questions: &[TallyRequest],
    ) -> Result<Tallies, Unexpected> {
        let state = self.lock();
        let responses: Vec<&SurveyResponse> =
            state.kept_responses(project, survey_id, filter).collect();
        let tally = |request: &TallyRequest| {
            let answers: Vec<&serde_json::Value> = responses
                .iter()
                .filter_map(|r| answer(&request.keys, &r.answers))
                .filter(|answer| is_answered(answer))
                .collect();
            let mut counts = BTreeMap::new();
            if request.values {
                for value in answers.iter().flat_map(|answer| tallied_values(answer)) {
                    *counts.entry(value).or_insert(0) += 1;
                }
            }
            let (values, others) = ranked(counts);
            Tally {
                answered: answers.len() as u64,
                values,
                others,
            }
        };
        Ok(Tallies {
            responses: responses.len() as u64,
            questions: questions.iter().map(tally).collect(),
        })
    }

    async fn responses_after(
        &self,
        project: ProjectId,
        survey_id: &str,
        filter: &ResponseFilter,
        after: Option<ExportCursor>,
        limit: u32,
        answer_bytes: usize,
    ) -> Result<Vec<SurveyResponse>, Unexpected> {
        let state = self.lock();
        let mut responses: Vec<&SurveyResponse> = state
            .kept_responses(project, survey_id, filter)
            .filter(|r| {
                after.is_none_or(|after| (r.timestamp, r.uuid) < (after.timestamp, after.uuid))
            })
            .collect();
        responses.sort_by_key(|r| std::cmp::Reverse((r.timestamp, r.uuid)));
        let batch = responses
            .into_iter()
            .take(limit as usize)
            .map(as_read)
            .collect();
        Ok(within_budget(batch, answer_bytes))
    }

    async fn delete_response(
        &self,
        project: ProjectId,
        survey: SurveyId,
        event: Uuid,
        activity: &NewActivity,
    ) -> Result<bool, Unexpected> {
        let mut state = self.lock();
        let survey_id = survey.0.to_string();
        let Some(key) = state.survey_events.iter().find_map(|(p, e)| {
            (*p == project && e.uuid == event && e.is_response() && e.survey_id == survey_id)
                .then(|| e.submission_key())
        }) else {
            return Ok(false);
        };
        let forgotten = state.forget(
            project,
            |survey, key_of, _| survey == survey_id && key_of == key,
            |e| e.is_response() && e.survey_id == survey_id && e.submission_key() == key,
        );
        if forgotten.responses == 0 {
            return Ok(false);
        }
        state.log_survey(project, survey, activity);
        Ok(true)
    }

    async fn delete_survey_responses(
        &self,
        project: ProjectId,
        survey: SurveyId,
        activity: &NewActivity,
    ) -> Result<Forgotten, Unexpected> {
        let mut state = self.lock();
        let survey_id = survey.0.to_string();
        let forgotten = state.forget(
            project,
            |survey, _, _| survey == survey_id,
            |e| e.survey_id == survey_id,
        );
        state.log_survey(project, survey, activity);
        Ok(forgotten)
    }

    async fn delete_persons(
        &self,
        project: ProjectId,
        distinct_ids: &[String],
        events: bool,
    ) -> Result<Forgotten, Unexpected> {
        let mut state = self.lock();
        let persons = state.forget_persons(project, distinct_ids);
        let mut forgotten = if events {
            state.forget(
                project,
                |_, _, response| distinct_ids.contains(&response.distinct_id),
                |e| distinct_ids.contains(&e.distinct_id),
            )
        } else {
            Forgotten::default()
        };
        forgotten.persons = persons;
        Ok(forgotten)
    }

    async fn set_archived(
        &self,
        project: ProjectId,
        survey_id: &str,
        event: Uuid,
        archived: bool,
    ) -> Result<bool, Unexpected> {
        let mut state = self.lock();
        let key = state.survey_events.iter().find_map(|(p, e)| {
            (*p == project && e.uuid == event && e.is_response() && e.survey_id == survey_id)
                .then(|| e.submission_key())
        });
        let Some(index) = key.and_then(|key| state.response_of(project, survey_id, &key)) else {
            return Ok(false);
        };
        state.survey_responses[index].response.archived = archived;
        Ok(true)
    }

    async fn archived_uuids(
        &self,
        project: ProjectId,
        survey_id: &str,
    ) -> Result<Vec<Uuid>, Unexpected> {
        let state = self.lock();
        let mut archived: Vec<&SurveyResponse> = state
            .survey_responses
            .iter()
            .filter(|s| s.project == project && s.survey_id == survey_id && s.response.archived)
            .map(|s| &s.response)
            .collect();
        archived.sort_by_key(|r| std::cmp::Reverse((r.timestamp, r.uuid)));
        Ok(archived.into_iter().map(|r| r.uuid).collect())
    }

    async fn aggregates(
        &self,
        project: ProjectId,
        survey_ids: &[String],
        window: DateWindow,
        exclude_archived: bool,
    ) -> Result<StatsAggregates, Unexpected> {
        let state = self.lock();
        let events = |kind: SurveyEventKind| {
            state.survey_events.iter().filter(move |(p, e)| {
                *p == project
                    && e.kind == kind
                    && survey_ids.contains(&e.survey_id)
                    && window.contains(e.timestamp)
            })
        };
        let dismissals = events(SurveyEventKind::Dismissed).filter(|(_, e)| !e.is_response());
        let sent: Vec<&SurveyResponse> = state
            .survey_responses
            .iter()
            .filter(|s| {
                s.project == project
                    && survey_ids.contains(&s.survey_id)
                    && !(exclude_archived && s.response.archived)
                    && window.contains(s.response.timestamp)
            })
            .map(|s| &s.response)
            .collect();
        let dismissers: BTreeSet<&str> = dismissals
            .clone()
            .map(|(_, e)| e.distinct_id.as_str())
            .collect();
        let senders: BTreeSet<&str> = sent.iter().map(|r| r.distinct_id.as_str()).collect();
        Ok(StatsAggregates {
            shown: aggregate(
                events(SurveyEventKind::Shown).map(|(_, e)| (e.distinct_id.as_str(), e.timestamp)),
            ),
            dismissed: aggregate(dismissals.map(|(_, e)| (e.distinct_id.as_str(), e.timestamp))),
            sent: aggregate(sent.iter().map(|r| (r.distinct_id.as_str(), r.timestamp))),
            dismissed_and_sent_persons: dismissers.intersection(&senders).count() as u64,
        })
    }
}
