//! Which of a survey's languages a visitor is shown, and the survey in it: what a hosted survey
//! page does with the visitor's `Accept-Language`, as posthog-js does with the page's language
//! (an exact key first, then the language without its subtags), and whether that language is
//! written right to left.

use serde_json::Map;

use super::question::Question;
use super::question_translations::QuestionTranslation;
use super::settings::Appearance;
use super::translations::translation_keys;
use super::{SurveyState, question_keys};

/// Languages written right to left by default (CLDR's likely scripts Arab, Hebr, Thaa, Syrc,
/// Nkoo, Adlm, Rohg): Arabic, Aramaic, Balochi, Central Kurdish, Dhivehi, Persian, Gilaki, Hebrew
/// (and its old code), Kashmiri, Northern Luri, Mazanderani, N'Ko, Pashto, Western Punjabi,
/// Sindhi, Southern Kurdish, Syriac, Uyghur, Urdu, Yiddish.
const RTL_LANGUAGES: [&str; 22] = [
    "ar", "arc", "bal", "ckb", "dv", "fa", "glk", "he", "iw", "ks", "lrc", "mzn", "nqo", "ps",
    "pnb", "sd", "sdh", "syr", "ug", "ur", "yi", "ji",
];

/// Script subtags written right to left, which decide whatever the language (`ku-arab`).
const RTL_SCRIPTS: [&str; 7] = ["arab", "hebr", "thaa", "syrc", "nkoo", "adlm", "rohg"];

/// Whether text in `language` (a normalised code) is written right to left: its script subtag
/// when it has one, else its language's usual script.
pub fn is_right_to_left(language: &str) -> bool {
    let mut subtags = language.split('-');
    let primary = subtags.next().unwrap_or_default();
    match subtags
        .find(|subtag| subtag.len() == 4 && subtag.bytes().all(|b| b.is_ascii_alphabetic()))
    {
        Some(script) => RTL_SCRIPTS.contains(&script),
        None => RTL_LANGUAGES.contains(&primary),
    }
}

/// The primary language subtag of a normalised code.
fn primary(code: &str) -> &str {
    code.split('-').next().unwrap_or(code)
}

impl SurveyState {
    /// The translation key a visitor whose browser sends `accept_language` is shown, `None` for
    /// the survey's own texts: the languages by preference (`q`), each matched to a key the
    /// public feed carries exactly, then by its primary subtag; the base language ends the
    /// search.
    pub fn display_language(&self, accept_language: &str) -> Option<String> {
        let keys = self.feed_keys();
        let mut wanted: Vec<(f32, String)> = accept_language
            .split(',')
            .filter_map(|part| {
                let mut pieces = part.split(';');
                let tag = pieces.next()?.trim().to_lowercase().replace('_', "-");
                let weight = pieces
                    .find_map(|piece| piece.trim().strip_prefix("q="))
                    .map_or(Some(1.0), |q| q.trim().parse::<f32>().ok())?;
                (weight > 0.0 && !tag.is_empty() && tag != "*").then_some((weight, tag))
            })
            .take(32)
            .collect();
        wanted.sort_by(|a, b| b.0.total_cmp(&a.0));
        let base = self.base_language.as_str();
        for (_, tag) in wanted {
            if tag == base || primary(&tag) == base {
                return None;
            }
            if let Some(key) = keys
                .iter()
                .find(|key| **key == tag)
                .or_else(|| keys.iter().find(|key| *key == primary(&tag)))
            {
                return Some(key.clone());
            }
        }
        None
    }

    /// Every key the feed carries, of the survey or of a question.
    fn feed_keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self
            .translations
            .as_ref()
            .map(|translations| translations.for_feed(&self.base_language).into_keys())
            .unwrap_or_default();
        for question in self.questions.iter().flat_map(|questions| questions.iter()) {
            let translations = question.base().translations.as_ref();
            if let Some(feed) = translations.and_then(|t| t.for_feed(&self.base_language)) {
                keys.extend(feed.iter().map(|(key, _)| key.to_owned()));
            }
        }
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// The survey with its texts in `language` (a key of the feed; `None`: its own) where it
    /// has them, and without translations: what a page showing one language embeds.
    pub fn in_language(&self, language: Option<&str>) -> Self {
        let base = &self.base_language;
        let mut state = self.clone();
        let entry = self
            .translations
            .as_ref()
            .zip(language)
            .and_then(|(translations, language)| translations.for_feed(base).take(language));
        if let Some(entry) = entry {
            if let Some(name) = entry.get(translation_keys::NAME) {
                name.clone_into(&mut state.name);
            }
            let texts = [
                translation_keys::THANK_YOU_HEADER,
                translation_keys::THANK_YOU_DESCRIPTION,
                translation_keys::THANK_YOU_CLOSE_BUTTON,
            ]
            .map(|field| entry.get(field).map(str::to_owned));
            if texts.iter().any(Option::is_some) {
                let appearance = state.appearance.get_or_insert_with(no_appearance);
                let [header, description, close] = texts;
                appearance.thank_you_message_header =
                    header.or(appearance.thank_you_message_header.take());
                appearance.thank_you_message_description =
                    description.or(appearance.thank_you_message_description.take());
                appearance.thank_you_message_close_button_text =
                    close.or(appearance.thank_you_message_close_button_text.take());
            }
        }
        state.translations = None;
        if let Some(questions) = &mut state.questions {
            questions.each_mut(|question| {
                let translation = question
                    .base()
                    .translations
                    .as_ref()
                    .and_then(|translations| translations.for_feed(base))
                    .zip(language)
                    .and_then(|(feed, language)| feed.take(language));
                if let Some(translation) = translation {
                    translate(question, &translation);
                }
                question.base_mut().translations = None;
            });
        }
        state
    }
}

/// `question` with the texts of `translation` in place of its own; choices only when there are
/// as many.
fn translate(question: &mut Question, translation: &QuestionTranslation) {
    let text = |field: &str| translation.texts.get(field).cloned();
    match question {
        Question::Link(link) => {
            if let Some(url) = text(question_keys::LINK) {
                link.link = Some(url);
            }
        }
        Question::Rating(rating) => {
            rating.lower_bound_label =
                text(question_keys::LOWER_BOUND_LABEL).or(rating.lower_bound_label.take());
            rating.upper_bound_label =
                text(question_keys::UPPER_BOUND_LABEL).or(rating.upper_bound_label.take());
        }
        Question::SingleChoice(choice) | Question::MultipleChoice(choice) => {
            if let Some(choices) = translation
                .choices
                .as_ref()
                .filter(|choices| choices.len() == choice.choices.len())
            {
                choice.choices.clone_from(choices);
            }
        }
        Question::Open(_) => {}
    }
    let base = question.base_mut();
    if let Some(asked) = text(question_keys::QUESTION) {
        base.question = asked;
    }
    base.description = text(question_keys::DESCRIPTION).or(base.description.take());
    base.button_text = text(question_keys::BUTTON_TEXT).or(base.button_text.take());
}

/// An `appearance` with nothing set, for a survey without one that is shown translated.
fn no_appearance() -> Appearance {
    Appearance {
        shuffle_questions: None,
        survey_popup_delay_seconds: None,
        white_label: None,
        thank_you_message_header: None,
        thank_you_message_description: None,
        thank_you_message_description_content_type: None,
        thank_you_message_close_button_text: None,
        extra: Map::new(),
    }
}
