"""Asks PostHog's own Python SDK (`posthog` from PyPI) for flags against a running Burrow in both
of its ways: locally, from the definitions it polls with a personal key
(`only_evaluate_locally=True`), and remotely (`/flags/`). For each person on standard input
(`[{"distinct_id", "properties", "groups"?, "group_properties"?}]`), every key of FLAG_KEYS must
have a local answer (not None) equal to the remote one; every key of REMOTE_ONLY_KEYS (flags
PostHog's server makes the SDKs ask `/flags` for) must have no local answer, and the SDK's own
fallback to `/flags` must give the remote one. Exits 1 on any disagreement or any problem the
SDK logs; prints one JSON object: {key: [value per person]}.

Environment: BURROW_URL, BURROW_TOKEN (the project's api token), BURROW_KEY (a personal API key
with feature_flag:read), FLAG_KEYS and REMOTE_ONLY_KEYS (comma-separated).
"""

import json
import logging
import os
import sys

try:
    import posthog
except ImportError as error:
    sys.exit(f"posthog-python is not installed for {sys.executable}: {error}")


# Warnings the SDK logs by design for what the test asks: a person without a group asking for a
# group flag (answered False locally, as /flags answers), and the flags it must ask /flags for —
# the one naming a static cohort, the one ensuring experience continuity. Any other warning is a
# problem.
EXPECTED_WARNINGS = (
    "Can't compute group feature flag",
    "have experience continuity enabled",
    "(reason: unsupported_definition): static-cohort.",
)


class Problems(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.seen = []

    def emit(self, record):
        message = record.getMessage()
        if not any(expected in message for expected in EXPECTED_WARNINGS):
            self.seen.append(f"{record.levelname}: {message}")


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
    remote_only = [key for key in os.environ.get("REMOTE_ONLY_KEYS", "").split(",") if key]
    values = {key: [] for key in keys + remote_only}
    for person in json.load(sys.stdin):
        distinct_id = person["distinct_id"]
        asked = dict(
            person_properties=person["properties"],
            groups=person.get("groups", {}),
            group_properties=person.get("group_properties", {}),
            send_feature_flag_events=False,
        )
        for key in keys + remote_only:
            here = local.get_feature_flag(key, distinct_id, only_evaluate_locally=True, **asked)
            there = remote.get_feature_flag(key, distinct_id, **asked)
            if key in remote_only:
                fallback = local.get_feature_flag(key, distinct_id, **asked)
                if here is not None or fallback is None or fallback != there:
                    errors.append(
                        f"{key} for {distinct_id}: local {here!r} (expected none), "
                        f"fallback {fallback!r}, /flags {there!r}"
                    )
                values[key].append(there)
                continue
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
