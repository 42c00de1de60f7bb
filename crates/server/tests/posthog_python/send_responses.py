"""Drives PostHog's own Python SDK (`posthog` from PyPI) against a running Burrow, as a backend
answering an `api` survey would, following PostHog's docs for custom surveys: a `survey shown`,
`survey sent` events carrying `$survey_id`, `$survey_response_<question id>`,
`$survey_submission_id`, `$survey_completed` and `$survey_questions`, and an unrelated `$pageview`.

Two clients: one with the SDK's defaults answers the first survey, one with `gzip=True` the second.
Each client is flushed and shut down, so the SDK really posts its uploads: to `/batch/`, or with
CAPTURE_MODE=v1 to capture v1 (`/i/v1/analytics/events`, `capture_mode="v1"`). Exits 1 when the
SDK reports any failure (its `on_error` callback, a warning or error in its log) or posts other
than each captured event once; prints one JSON line with the events posted per client.

Environment: BURROW_URL, BURROW_TOKEN (the project's api token); SURVEY_ID, OPEN_QUESTION_ID,
RATING_QUESTION_ID (the first survey); GZIP_SURVEY_ID, GZIP_OPEN_QUESTION_ID,
GZIP_RATING_QUESTION_ID (the second); CAPTURE_MODE (optional, `v1`).
"""

import json
import logging
import os
import sys
import uuid

try:
    import posthog
except ImportError as error:
    sys.exit(f"posthog-python is not installed for {sys.executable}: {error}")

OPEN_QUESTION = "What could we do better?"
RATING_QUESTION = "How likely are you to recommend us?"


class SdkLog(logging.Handler):
    """Counts the events the SDK posts (to `/batch/`, or accepted by capture v1) and keeps every
    warning or error it logs."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.events = 0
        self.problems = []

    def emit(self, record):
        # The SDK's own log filter has already folded the arguments into the message.
        message = record.getMessage()
        if record.levelno >= logging.WARNING:
            self.problems.append(f"{record.levelname}: {message}")
        elif "making request: " in message:
            body, url = message.split("making request: ", 1)[1].rsplit(" to url: ", 1)
            if url.endswith("/batch/"):
                self.events += len(json.loads(body)["batch"])
        elif "capture v1 response " in message:
            # "... events=3 ok=3 warning=0 drop=0 retry=0 other=0": each verdict once.
            fields = dict(part.split("=", 1) for part in message.split() if "=" in part)
            self.events += int(fields["ok"])


def survey_sent(distinct_id, survey, answers, submission_id=None, completed=None):
    """A `survey sent` event as PostHog's SDKs send it for `answers` ({question id: response})."""
    properties = {
        "$survey_id": survey["id"],
        "$survey_name": survey["name"],
        "$survey_questions": [
            {"id": question_id, "question": text, "response": answers.get(question_id)}
            for question_id, text in survey["questions"]
        ],
        "$set": {f"$survey_responded/{survey['id']}": True},
    }
    for question_id, response in answers.items():
        properties[f"$survey_response_{question_id}"] = response
    if submission_id is not None:
        properties["$survey_submission_id"] = submission_id
    if completed is not None:
        properties["$survey_completed"] = completed
    return ("survey sent", distinct_id, properties)


def events(survey, people):
    """(event, distinct id, properties): three responses to `survey` from `people` (three distinct
    ids), and events that are no response."""
    first, second, third = people
    open_id, rating_id = (question_id for question_id, _ in survey["questions"])
    partial = str(uuid.uuid4())
    return [
        ("survey shown", first, {"$survey_id": survey["id"], "$survey_name": survey["name"]}),
        # A complete submission in one event.
        survey_sent(
            first,
            survey,
            {open_id: "Faster exports, please.", rating_id: "9"},
            submission_id=str(uuid.uuid4()),
            completed=True,
        ),
        # Partial responses: one event per answered question, sharing the submission id.
        survey_sent(second, survey, {open_id: "Nothing."}, partial, completed=False),
        survey_sent(second, survey, {open_id: "Nothing.", rating_id: "7"}, partial, completed=True),
        # An older SDK's event: no submission id, so it counts on its own.
        survey_sent(third, survey, {open_id: "More integrations.", rating_id: "10"}),
        ("$pageview", third, {"$current_url": "/pricing"}),
    ]


def run(name, survey, people, **options):
    """Answers `survey` through a fresh client made with `options`; the failures it reported."""
    errors = []
    log = SdkLog()
    logger = logging.getLogger("posthog")
    logger.addHandler(log)
    try:
        client = posthog.Posthog(
            project_api_key=os.environ["BURROW_TOKEN"],
            host=os.environ["BURROW_URL"],
            debug=True,
            on_error=lambda error, batch: errors.append(f"{error!r} for {len(batch)} events"),
            **options,
        )
        captured = events(survey, people)
        for event, distinct_id, properties in captured:
            client.capture(event, distinct_id=distinct_id, properties=properties)
        client.flush()
        client.shutdown()
    finally:
        logger.removeHandler(log)
    problems = errors + log.problems
    if log.events != len(captured):
        # Fewer: some were never posted; more: some were posted again after a failure.
        problems.append(f"the SDK posted {log.events} events for the {len(captured)} captured")
    return log.events, [f"{name}: {problem}" for problem in problems]


def survey_from_env(prefix, name):
    return {
        "id": os.environ[f"{prefix}SURVEY_ID"],
        "name": name,
        "questions": [
            (os.environ[f"{prefix}OPEN_QUESTION_ID"], OPEN_QUESTION),
            (os.environ[f"{prefix}RATING_QUESTION_ID"], RATING_QUESTION),
        ],
    }


def main():
    mode = {"capture_mode": "v1"} if os.environ.get("CAPTURE_MODE") == "v1" else {}
    default_events, default_problems = run(
        "defaults",
        survey_from_env("", "Checkout feedback"),
        ("person-1", "person-2", "person-3"),
        **mode,
    )
    gzip_events, gzip_problems = run(
        "gzip",
        survey_from_env("GZIP_", "Onboarding feedback"),
        ("person-4", "person-5", "person-6"),
        gzip=True,
        **mode,
    )
    problems = default_problems + gzip_problems
    for problem in problems:
        print(problem, file=sys.stderr)
    print(json.dumps({"posted": {"defaults": default_events, "gzip": gzip_events}}))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
