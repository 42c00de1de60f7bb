//! How large what a survey's respondents send may be: an event and an answer are refused past
//! their limits at capture.

/// Largest captured event, as sent (its JSON text after the transport's encodings are undone):
/// PostHog's capture refuses an event past its Kafka producer's `message.max.bytes`, 1,000,000
/// bytes by default.
pub const MAX_EVENT_BYTES: usize = 1_000_000;

/// Largest `$survey_response*` answer, as sent (its JSON text). Answers are human text or a
/// few choices; 64 KiB is a long essay.
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;
