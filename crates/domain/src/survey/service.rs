//! (in progress)
/// Survey use cases.
pub struct SurveyService;
/// PUT or PATCH.
#[derive(Debug, Clone, Copy)]
pub enum UpdateMode {
    Partial,
    Full,
}
