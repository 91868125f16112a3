package example.licenceserver.client;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/** The verified answers of the online calls (docs/client-api.md). */
public final class Answers {
  private Answers() {}

  /** A verified /validate answer. */
  public static final class Validation extends JsonView {
    Validation(Map<String, Object> raw) { super(raw); }
    public boolean valid() { return bool("valid"); }
    /** active, grace, expired, suspended or revoked. */
    public String status() { return string("status"); }
    public String code() { return string("code"); }
    public String expiresAt() { return string("expires_at"); }
    public String graceEndsAt() { return string("grace_ends_at"); }
    public String checkedAt() { return string("checked_at"); }
    public Long uses() { return number("uses"); }
    public Long maxUses() { return number("max_uses"); }
  }

  /** A verified /usage answer: the count after this call (null counts when the licence is not metered). */
  public static final class Usage extends JsonView {
    Usage(Map<String, Object> raw) { super(raw); }
    public Long uses() { return number("uses"); }
    public Long maxUses() { return number("max_uses"); }
    public Long remaining() { return number("remaining"); }
    public String periodStart() { return string("period_start"); }
    public String periodEnd() { return string("period_end"); }
    public String checkedAt() { return string("checked_at"); }
  }

  /** The /heartbeat answer. */
  public static final class Heartbeat extends JsonView {
    Heartbeat(Map<String, Object> raw) { super(raw); }
    public boolean valid() { return bool("valid"); }
    public String status() { return string("status"); }
    public String code() { return string("code"); }
    public Long heartbeatTimeoutSeconds() { return number("heartbeat_timeout_seconds"); }
    public String nextHeartbeatBefore() { return string("next_heartbeat_before"); }
  }

  /** The /deactivate answer. */
  public static final class Deactivation extends JsonView {
    Deactivation(Map<String, Object> raw) { super(raw); }
    public String message() { return string("message"); }
    public boolean canReactivate() { return bool("can_reactivate"); }
  }

  /** The /license-file answer (a version 2 file: it carries an envelope). */
  public static final class LicenseFile extends JsonView {
    LicenseFile(Map<String, Object> raw) { super(raw); }
    public String licenseFile() { return string("license_file"); }
    public String fileExpiresAt() { return string("file_expires_at"); }
  }

  /** A verified /releases/check answer: the update offered, or none. */
  public static final class UpdateCheck extends JsonView {
    UpdateCheck(Map<String, Object> raw) { super(raw); }

    /** The newest release this licence may have above the current version, or null when there is none. */
    public Release update() {
      Map<String, Object> update = Json.asObject(raw.get("update"));
      return update == null ? null : new Release(update);
    }

    public String checkedAt() { return string("checked_at"); }
  }

  /** A release offered by /releases/check. */
  public static final class Release extends JsonView {
    Release(Map<String, Object> raw) { super(raw); }
    public String version() { return string("version"); }
    public String channel() { return string("channel"); }
    public String notes() { return string("notes"); }
    public String publishedAt() { return string("published_at"); }

    public List<Artifact> artifacts() {
      List<Artifact> out = new ArrayList<>();
      for (Object item : Json.asList(raw.get("artifacts"))) {
        Map<String, Object> artifact = Json.asObject(item);
        if (artifact != null) out.add(new Artifact(artifact));
      }
      return Collections.unmodifiableList(out);
    }
  }

  /** One downloadable file of a release: its signed size and digests, and a short-lived link. */
  public static final class Artifact extends JsonView {
    Artifact(Map<String, Object> raw) { super(raw); }
    public String filename() { return string("filename"); }
    public String platform() { return string("platform"); }
    public String arch() { return string("arch"); }
    public Long size() { return number("size"); }
    /** Hex. */
    public String sha256() { return string("sha256"); }
    /** Hex. */
    public String sha512() { return string("sha512"); }
    public String url() { return string("url"); }
    public String urlExpiresAt() { return string("url_expires_at"); }
  }
}
