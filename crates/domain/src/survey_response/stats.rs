//! Survey stats as PostHog reports them: per event kind totals, unique persons, first and last
//! seen, "only seen" (shown but neither dismissed nor sent), and rates in percent.

use chrono::{DateTime, Utc};

/// What storage adds up for one event kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventAggregate {
    pub total_count: u64,
    pub unique_persons: u64,
    pub first_seen: Option<DateTime<Utc>>,
    pub last_seen: Option<DateTime<Utc>>,
}

/// What storage adds up for the three kinds, and the persons who both dismissed and sent
/// (counted as responders, not dismissers).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatsAggregates {
    pub shown: EventAggregate,
    pub dismissed: EventAggregate,
    pub sent: EventAggregate,
    pub dismissed_and_sent_persons: u64,
}

/// One kind's stats as reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EventStats {
    pub total_count: u64,
    pub unique_persons: u64,
    pub first_seen: Option<DateTime<Utc>>,
    pub last_seen: Option<DateTime<Utc>>,
    /// Only for shown: persons who saw the survey and did nothing else.
    pub unique_persons_only_seen: u64,
    pub total_count_only_seen: u64,
}

/// Rates in percent, rounded to 2 decimals; all 0 when nothing was shown.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SurveyRates {
    pub response_rate: f64,
    pub dismissal_rate: f64,
    pub unique_users_response_rate: f64,
    pub unique_users_dismissal_rate: f64,
}

/// The three kinds' stats.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SurveyStats {
    pub shown: EventStats,
    pub dismissed: EventStats,
    pub sent: EventStats,
}

impl SurveyStats {
    /// PostHog's derivation: a person who dismissed and then sent counts as a responder only;
    /// "only seen" is what shown leaves after dismissed and sent, never below zero.
    pub fn from_aggregates(aggregates: &StatsAggregates) -> Self {
        let plain = |a: &EventAggregate| EventStats {
            total_count: a.total_count,
            unique_persons: a.unique_persons,
            first_seen: a.first_seen,
            last_seen: a.last_seen,
            unique_persons_only_seen: 0,
            total_count_only_seen: 0,
        };
        let mut dismissed = plain(&aggregates.dismissed);
        dismissed.unique_persons = dismissed
            .unique_persons
            .saturating_sub(aggregates.dismissed_and_sent_persons);
        let sent = plain(&aggregates.sent);
        let mut shown = plain(&aggregates.shown);
        shown.unique_persons_only_seen = shown
            .unique_persons
            .saturating_sub(dismissed.unique_persons)
            .saturating_sub(sent.unique_persons);
        shown.total_count_only_seen = shown
            .total_count
            .saturating_sub(dismissed.total_count)
            .saturating_sub(sent.total_count);
        Self {
            shown,
            dismissed,
            sent,
        }
    }

    pub fn rates(&self) -> SurveyRates {
        if self.shown.total_count == 0 {
            return SurveyRates::default();
        }
        SurveyRates {
            response_rate: percent(self.sent.total_count, self.shown.total_count),
            dismissal_rate: percent(self.dismissed.total_count, self.shown.total_count),
            unique_users_response_rate: percent(
                self.sent.unique_persons,
                self.shown.unique_persons,
            ),
            unique_users_dismissal_rate: percent(
                self.dismissed.unique_persons,
                self.shown.unique_persons,
            ),
        }
    }
}

/// `part / whole` in percent, rounded to 2 decimals; 0 for an empty whole.
fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        return 0.0;
    }
    (part as f64 / whole as f64 * 10_000.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aggregate(total_count: u64, unique_persons: u64) -> EventAggregate {
        EventAggregate {
            total_count,
            unique_persons,
            ..EventAggregate::default()
        }
    }

    #[test]
    fn only_seen_is_what_shown_leaves_after_dismissed_and_sent() {
        let stats = SurveyStats::from_aggregates(&StatsAggregates {
            shown: aggregate(10, 6),
            dismissed: aggregate(3, 3),
            sent: aggregate(4, 2),
            dismissed_and_sent_persons: 1,
        });
        assert_eq!(stats.dismissed.unique_persons, 2);
        assert_eq!(stats.shown.unique_persons_only_seen, 2);
        assert_eq!(stats.shown.total_count_only_seen, 3);
    }

    #[test]
    fn only_seen_never_goes_below_zero() {
        let stats = SurveyStats::from_aggregates(&StatsAggregates {
            shown: aggregate(1, 1),
            sent: aggregate(5, 5),
            ..StatsAggregates::default()
        });
        assert_eq!(stats.shown.unique_persons_only_seen, 0);
        assert_eq!(stats.shown.total_count_only_seen, 0);
    }

    #[test]
    fn rates_are_percentages_rounded_to_two_decimals() {
        let stats = SurveyStats::from_aggregates(&StatsAggregates {
            shown: aggregate(3, 3),
            dismissed: aggregate(1, 1),
            sent: aggregate(2, 2),
            dismissed_and_sent_persons: 0,
        });
        let rates = stats.rates();
        assert!((rates.response_rate - 66.67).abs() < f64::EPSILON);
        assert!((rates.dismissal_rate - 33.33).abs() < f64::EPSILON);
        assert!((rates.unique_users_response_rate - 66.67).abs() < f64::EPSILON);
    }

    #[test]
    fn rates_are_zero_when_nothing_was_shown() {
        let stats = SurveyStats::from_aggregates(&StatsAggregates {
            sent: aggregate(2, 2),
            ..StatsAggregates::default()
        });
        assert_eq!(stats.rates(), SurveyRates::default());
    }
}
