"""Asks PostHog's own Python SDK (`posthog` from PyPI) for flags against a running Burrow in both
of its ways: locally, from the definitions it polls with a personal key
(`only_evaluate_locally=True`), and remotely (`/flags/`). For `distinct_id_0` ..
`distinct_id_<COUNT - 1>`, each with person properties derived from its number, every key of
FLAG_KEYS must have a local answer (not None) equal to the remote one. Exits 1 on any
disagreement or any problem the SDK logs; prints one JSON object: {key: [local value per
distinct id]}.

Environment: BURROW_URL, BURROW_TOKEN (the project's api token), BURROW_KEY (a personal API key
with feature_flag:read), FLAG_KEYS (comma-separated), COUNT.
"""

import json
import logging
import os
import sys

try:
    import posthog
except ImportError as error:
    sys.exit(f"posthog-python is not installed for {sys.executable}: {error}")


class Problems(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.seen = []

    def emit(self, record):
        self.seen.append(f"{record.levelname}: {record.getMessage()}")


def person_properties(i):
    return {
        "plan": "pro" if i % 2 else "free",
        "email": f"user{i}@example.com" if i % 3 else f"user{i}@other.org",
        "seats": i % 7,
        # Versions as apps report them: a `v` prefix, pre-releases, two parts.
        "app_version": ["1.1.9", "v1.2.0", "1.2.0-beta.2", "1.10", "2.0.1", "0.9.3"][i % 6],
        "url": ["https://app.example.com/a", "http://example.com", "HTTPS://Docs.example.org"][i % 3],
        "signed_up": f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T00:00:00+00:00",
    }


def main():
    problems = Problems()
    logging.getLogger("posthog").addHandler(problems)
    errors = []
    common = dict(
        host=os.environ["BURROW_URL"],
        on_error=lambda error, _items: errors.append(repr(error)),
        sync_mode=True,
    )
    token = os.environ["BURROW_TOKEN"]
    local = posthog.Client(token, personal_api_key=os.environ["BURROW_KEY"], **common)
    remote = posthog.Client(token, **common)
    keys = os.environ["FLAG_KEYS"].split(",")
    values = {key: [] for key in keys}
    for i in range(int(os.environ["COUNT"])):
        distinct_id = f"distinct_id_{i}"
        properties = person_properties(i)
        for key in keys:
            here = local.get_feature_flag(
                key,
                distinct_id,
                person_properties=properties,
                only_evaluate_locally=True,
                send_feature_flag_events=False,
            )
            there = remote.get_feature_flag(
                key, distinct_id, person_properties=properties, send_feature_flag_events=False
            )
            if here is None or here != there:
                errors.append(f"{key} for {distinct_id}: local {here!r}, /flags {there!r}")
            values[key].append(here)
    local.shutdown()
    remote.shutdown()
    if errors or problems.seen:
        sys.exit("\n".join(errors + problems.seen))
    print(json.dumps(values))


if __name__ == "__main__":
    main()
