//! The SQL spelling of the answer rules the port states (`SurveyResponseRepository::responses`):
//! answers as an object, answered, an answer's items, searched.

/// A response's answers as an object (a stored value of another shape reads as none), so the
/// jsonb functions below never meet a shape they refuse.
macro_rules! answers_object {
    () => {
        "CASE jsonb_typeof(answers) WHEN 'object' THEN answers ELSE '{}'::jsonb END"
    };
}

/// Whether the answer `v` (an SQL expression naming a jsonb value) was given:
/// the port's rule.
macro_rules! answered {
    ($v:literal) => {
        concat!(
            $v,
            " IS NOT NULL AND ",
            $v,
            " NOT IN ('null'::jsonb, '\"\"'::jsonb, '[]'::jsonb)"
        )
    };
}

/// The items of the answer `v`: its elements when it is a list, itself otherwise.
macro_rules! items {
    ($v:literal) => {
        concat!(
            "jsonb_array_elements(CASE jsonb_typeof(",
            $v,
            ") WHEN 'array' THEN ",
            $v,
            " ELSE jsonb_build_array(",
            $v,
            ") END)"
        )
    };
}

/// Whether the answer `v` has a string item matching the `ILIKE` pattern bound next:
/// the port's rule.
macro_rules! searched {
    ($v:literal) => {
        concat!(
            "EXISTS (SELECT 1 FROM ",
            items!($v),
            " e WHERE jsonb_typeof(e) = 'string' AND e #>> '{}' ILIKE "
        )
    };
}

pub(super) use {answered, answers_object, items, searched};
