//! Persons as flags see them: the properties known of a `distinct_id` in a project, kept so a
//! flag can target what an SDK once `$set` (a survey's targeting flag turns off for a person who
//! answered it) without the SDK sending it again.

mod port;

pub use port::PersonRepository;
