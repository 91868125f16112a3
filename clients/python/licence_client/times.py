"""ISO 8601 times as the server writes them, read as seconds since the epoch."""

import datetime


def seconds_of(value):
    """Seconds since the epoch of an ISO 8601 time (UTC when it names no zone), or None when it is not one."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.timezone.utc)
    return parsed.timestamp()
