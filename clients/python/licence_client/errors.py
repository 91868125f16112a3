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
