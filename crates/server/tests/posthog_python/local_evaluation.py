"""Asks PostHog's own Python SDK (`posthog` from PyPI) for flags against a running Burrow in both
of its ways: locally, from the definitions it polls with a personal key
(`only_evaluate_locally=True`), and remotely (`/flags/`). For each person on standard input
(`[{"distinct_id", "properties"}]`), every key of FLAG_KEYS must have a local answer (not None)
equal to the remote one. Exits 1 on any disagreement or any problem the SDK logs; prints one
JSON object: {key: [local value per person]}.

Environment: BURROW_URL, BURROW_TOKEN (the project's api token), BURROW_KEY (a personal API key
with feature_flag:read), FLAG_KEYS (comma-separated).
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
    for person in json.load(sys.stdin):
        distinct_id, properties = person["distinct_id"], person["properties"]
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
