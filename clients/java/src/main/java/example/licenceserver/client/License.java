package example.licenceserver.client;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The signed licence (an envelope's payload; docs/client-api.md, The signed licence). */
public final class License extends JsonView {
  License(Map<String, Object> raw) {
    super(raw);
  }

  /** Null when the payload is not a licence (a member of the wrong type). */
  static License parse(Map<String, Object> payload) {
    if (payload == null) return null;
    for (String name : new String[] {"license_key", "product", "machine_fingerprint"}) {
      if (!(payload.get(name) instanceof String)) return null;
    }
    for (String name : new String[] {"expires_at", "activated_at", "signed_at", "file_issued_at", "file_expires_at", "license_type", "issued_at"}) {
      Object value = payload.get(name);
      if (value != null && !(value instanceof String)) return null;
    }
    Object grace = payload.get("grace_days");
    if (grace != null && Json.asLong(grace) == null) return null;
    Object policy = payload.get("policy");
    if (policy != null && !(policy instanceof Map)) return null;
    Object features = payload.get("features");
    if (features != null && !(features instanceof List)) return null;
    return new License(payload);
  }

  public String licenseKey() { return string("license_key"); }
  public String product() { return string("product"); }
  public String licenseType() { return string("license_type"); }
  public String issuedAt() { return string("issued_at"); }
  /** Null for a perpetual licence. */
  public String expiresAt() { return string("expires_at"); }
  public String activatedAt() { return string("activated_at"); }
  public String machineFingerprint() { return string("machine_fingerprint"); }
  public long graceDays() { Long days = number("grace_days"); return days == null ? 0 : days; }
  public List<String> features() { return strings("features"); }
  public String keyId() { return string("key_id"); }
  public String signedAt() { return string("signed_at"); }
  /** Set in a licence file. */
  public String fileIssuedAt() { return string("file_issued_at"); }
  public String fileExpiresAt() { return string("file_expires_at"); }

  public String customerName() {
    Map<String, Object> customer = Json.asObject(raw.get("customer"));
    return customer == null ? null : Json.asString(customer.get("name"));
  }

  /** Named limits such as max_installations. */
  public Map<String, Long> limits() {
    Map<String, Long> out = new LinkedHashMap<>();
    Map<String, Object> limits = Json.asObject(raw.get("limits"));
    if (limits != null) for (Map.Entry<String, Object> e : limits.entrySet()) if (e.getValue() instanceof BigDecimal) out.put(e.getKey(), Json.asLong(e.getValue()));
    return out;
  }

  /** The floating seat's heartbeat timeout in seconds, or null for a seat that needs no heartbeat. */
  public Long heartbeatTimeoutSeconds() {
    Map<String, Object> policy = Json.asObject(raw.get("policy"));
    return policy == null ? null : Json.asLong(policy.get("heartbeat_timeout_seconds"));
  }
}
