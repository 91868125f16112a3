/** An error answer of the licence server: `{"error": {"code", "message", "details"}}` with its HTTP status. */
export class LicenseServerError extends Error {
  override readonly name = 'LicenseServerError';
  constructor(
    /** The server's stable error code, e.g. `INVALID_KEY`, `ALREADY_ACTIVATED`, `RATE_LIMITED`. */
    readonly code: string,
    readonly status: number,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** The server could not be reached, or did not answer in time, or answered something that is not the API. */
export class NetworkError extends Error {
  override readonly name = 'NetworkError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** An online answer that does not verify: wrong signature, unknown key, wrong nonce, or data for another machine. */
export class VerificationError extends Error {
  override readonly name = 'VerificationError';
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }

  /** The same as `reason`, so every error of this package can be told apart by `code`. */
  get code(): string {
    return this.reason;
  }
}

/**
 * The state file cannot be kept where `statePath` says: its folder cannot be created (mode 0700) or written, or the file
 * cannot be written. Raised before any network call where possible, so no seat is bound that the client cannot remember.
 * `code` is `STATE_PATH`.
 */
export class StateError extends Error {
  override readonly name = 'StateError';
  readonly code = 'STATE_PATH';
  constructor(
    readonly path: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
