"""Asks PostHog's own Python SDK (`posthog` from PyPI, remote evaluation: `/flags/`) for flags
against a running Burrow: `feature_enabled` and `get_feature_flag` of each key in FLAG_KEYS for
`distinct_id_0` .. `distinct_id_<COUNT - 1>`. Exits 1 when the SDK reports any failure; prints one
JSON object: {key: [value per distinct id]} with `get_feature_flag`'s values, after checking that
`feature_enabled` agrees with them.

Environment: BURROW_URL, BURROW_TOKEN (the project's api token), FLAG_KEYS (comma-separated),
COUNT.
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
    client = posthog.Client(
        os.environ["BURROW_TOKEN"],
        host=os.environ["BURROW_URL"],
        on_error=lambda error, _items: errors.append(repr(error)),
        sync_mode=True,
    )
    values = {}
    for key in os.environ["FLAG_KEYS"].split(","):
        values[key] = []
        for i in range(int(os.environ["COUNT"])):
            distinct_id = f"distinct_id_{i}"
            value = client.get_feature_flag(key, distinct_id, send_feature_flag_events=False)
            enabled = client.feature_enabled(key, distinct_id, send_feature_flag_events=False)
            if bool(value) != bool(enabled):
                errors.append(f"{key} for {distinct_id}: get_feature_flag {value!r}, feature_enabled {enabled!r}")
            values[key].append(value)
    client.shutdown()
    if errors or problems.seen:
        sys.exit("\n".join(errors + problems.seen))
    print(json.dumps(values))


if __name__ == "__main__":
    main()
