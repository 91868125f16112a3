package example.licenceserver.client;

import java.time.Instant;

/** The offline decision: ok with status "active" or "grace", or a reason code and a message. */
public final class CheckResult {
  public final boolean ok;
  /** Null when ok; else NO_LICENSE, EXPIRED, FINGERPRINT_MISMATCH, CLOCK_TAMPERED, ... (docs/clients.md). */
  public final String reason;
  public final String message;
  /** "active" or "grace" when ok. */
  public final String status;
  /** The stored licence, also on most refusals. */
  public final License license;
  /** "license_file" or "activation". */
  public final String source;
  public final Instant expiresAt;
  public final Instant graceEndsAt;
  public final Instant fileExpiresAt;

  CheckResult(boolean ok, String reason, String message, String status, License license, String source, Instant expiresAt, Instant graceEndsAt, Instant fileExpiresAt) {
    this.ok = ok;
    this.reason = reason;
    this.message = message;
    this.status = status;
    this.license = license;
    this.source = source;
    this.expiresAt = expiresAt;
    this.graceEndsAt = graceEndsAt;
    this.fileExpiresAt = fileExpiresAt;
  }

  static CheckResult refuse(String reason, String message, License license) {
    return new CheckResult(false, reason, message, null, license, null, null, null, null);
  }

  @Override
  public String toString() {
    return ok ? "ok (" + status + ")" : reason + ": " + message;
  }
}
