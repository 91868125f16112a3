"""The three errors online calls raise, each with a stable `code`."""


class LicenseServerError(Exception):
    """The server's error answer `{"error": {"code", "message", "details"}}` with its HTTP status."""

    def __init__(self, code, status, message, details=None):
        super().__init__(message)
        self.code = code
        self.status = status
        self.details = details or {}


class NetworkError(Exception):
    """No answer, a timeout, or an answer that is not the API."""

    code = "NETWORK_ERROR"


class VerificationError(Exception):
    """An answer or licence file that does not verify; `reason` (and `code`) is a stable reason code."""

    def __init__(self, reason, message):
        super().__init__(message)
        self.reason = reason

    @property
    def code(self):
        return self.reason


class StateError(Exception):
    """The state file cannot be kept at `state_path`: its folder cannot be created (mode 0700) or written, or the
    file cannot be written. Raised before any network call where possible; `code` is ``STATE_PATH``."""

    code = "STATE_PATH"

    def __init__(self, path, message):
        super().__init__(message)
        self.path = path
