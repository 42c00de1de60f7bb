//! Sanitizing the HTML that survey texts may carry, with an allow-list like PostHog's:
//! formatting tags stay, anything executable goes (`<script>` together with its content).

use std::collections::HashSet;
use std::sync::OnceLock;

use ammonia::Builder;

const ALLOWED_TAGS: &[&str] = &[
    "a",
    "b",
    "blockquote",
    "br",
    "code",
    "div",
    "em",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "img",
    "li",
    "ol",
    "p",
    "pre",
    "s",
    "small",
    "span",
    "strong",
    "sub",
    "sup",
    "table",
    "tbody",
    "td",
    "th",
    "thead",
    "tr",
    "u",
    "ul",
];

fn cleaner() -> &'static Builder<'static> {
    static CLEANER: OnceLock<Builder<'static>> = OnceLock::new();
    CLEANER.get_or_init(|| {
        let mut builder = Builder::default();
        builder.tags(ALLOWED_TAGS.iter().copied().collect::<HashSet<_>>());
        builder
    })
}

/// Cleans `text` when it looks like HTML; plain text is returned untouched so that `Q&A`
/// does not become `Q&amp;A`.
pub(crate) fn sanitize(text: &str) -> String {
    if text.contains('<') {
        cleaner().clean(text).to_string()
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_are_removed_with_their_content() {
        assert_eq!(sanitize("<script>alert(0)</script>check?"), "check?");
    }

    #[test]
    fn formatting_survives_and_handlers_do_not() {
        assert_eq!(
            sanitize("<b>bold</b> <i onclick=\"x()\">it</i>"),
            "<b>bold</b> <i>it</i>"
        );
    }

    #[test]
    fn plain_text_is_left_alone() {
        assert_eq!(sanitize("Q&A > nothing"), "Q&A > nothing");
    }
}
