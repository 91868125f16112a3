"""Client library for the licence server: activation, signed validation with a nonce, usage, heartbeats,
licence files and an offline check that verifies signed envelopes against the keys the application ships."""

from .client import (
    CheckResult,
    HeartbeatLoop,
    LicenseClient,
    RelayHeartbeatLoop,
    RelaySeat,
    Response,
    default_fingerprint,
    urllib_transport,
)
from .errors import LicenseServerError, NetworkError, StateError, VerificationError

__version__ = "0.1.0"

__all__ = [
    "CheckResult",
    "HeartbeatLoop",
    "LicenseClient",
    "LicenseServerError",
    "NetworkError",
    "RelayHeartbeatLoop",
    "RelaySeat",
    "Response",
    "StateError",
    "VerificationError",
    "default_fingerprint",
    "urllib_transport",
]
