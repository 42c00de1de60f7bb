//! (in progress)
/// A parsed survey request body.
#[derive(Debug, Clone, Default)]
pub struct SurveyInput;
