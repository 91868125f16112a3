package example.licenceserver.client;

import example.licenceserver.client.LicenceException.VerificationError;
import java.math.BigDecimal;
import java.security.GeneralSecurityException;
import java.time.Instant;
import java.util.Map;
import java.util.Set;

/**
 * Leases from a relay on an offline network (docs/clients.md, Relay leases): the pool file is signed by the vendor, the
 * lease by the relay's own Ed25519 key that the pool names. Nothing the relay says is trusted before both signatures
 * check out.
 */
final class Relay {
  static final String POOL_LABEL = "RELAY POOL";

  private Relay() {}

  /** A verified lease and the pool it comes from (each exactly as signed). */
  static final class Verified {
    final Map<String, Object> lease;
    final Map<String, Object> pool;

    Verified(Map<String, Object> lease, Map<String, Object> pool) {
      this.lease = lease;
      this.pool = pool;
    }
  }

  /**
   * Checks a {@code POST /relay/v1/leases} answer, in this order: the pool file's armor, its envelope with the vendor
   * keys {@code trusted}, the pool equal to the payload, the relay key's id, product, the pool's expiry; then the lease
   * envelope with the pool's relay key only, the lease equal to its payload, its pool, this machine's fingerprint, the
   * lease's expiry. A VerificationError carries a stable reason (clients/conformance-format.md, relay_lease).
   */
  static Verified verify(Map<String, Object> answer, Map<String, VerificationKey> trusted, Set<String> revoked, String fingerprint, String product, Instant now)
      throws VerificationError {
    if (answer == null) throw new VerificationError("MALFORMED_ENVELOPE", "the relay answered no lease");
    String text = LicenseClient.dearmor(POOL_LABEL, Json.asString(answer.get("pool_file")));
    Map<String, Object> file = text == null ? null : Json.object(text);
    if (file == null || !file.containsKey("pool") || !file.containsKey("envelope")) {
      throw new VerificationError("MALFORMED_ENVELOPE", "not a relay pool file");
    }
    Map<String, Object> pool = Json.asObject(Json.parse(Trust.openEnvelope(file.get("envelope"), trusted, revoked)));
    if (!Json.sameValue(file.get("pool"), pool)) throw new VerificationError("PAYLOAD_MISMATCH", "the pool differs from the vendor's signed payload");
    VerificationKey relayKey = relayKey(pool);
    Map<String, Object> license = Json.asObject(pool.get("license"));
    Instant expires = LicenseClient.parseTime(Json.asString(pool.get("expires_at")));
    if (relayKey == null || Json.asString(pool.get("pool_id")) == null || license == null || expires == null) {
      throw new VerificationError("MALFORMED_PAYLOAD", "the pool lacks a relay Ed25519 key that matches relay_key_id");
    }
    if (product != null && !product.equals(license.get("product"))) {
      throw new VerificationError("PRODUCT_MISMATCH", "the pool lends " + license.get("product") + ", not " + product);
    }
    if (!now.isBefore(expires)) throw new VerificationError("POOL_EXPIRED", "the pool expired at " + pool.get("expires_at"));

    Map<String, Object> envelope = Json.asObject(answer.get("envelope"));
    String named = envelope == null ? null : Json.asString(envelope.get("key_id"));
    if (named != null && !named.equals(relayKey.keyId())) {
      throw new VerificationError("INVALID_SIGNATURE", "the lease is signed by key " + named + ", not by the pool's relay key " + relayKey.keyId());
    }
    // The relay key is the only key a lease may carry: a vendor key, trusted for pools, signs no lease.
    Map<String, Object> lease = Json.asObject(Json.parse(Trust.openEnvelope(answer.get("envelope"), Map.of(relayKey.keyId(), relayKey), Set.of())));
    if (!answer.containsKey("lease") || !Json.sameValue(answer.get("lease"), lease)) {
      throw new VerificationError("PAYLOAD_MISMATCH", "the lease differs from the relay's signed payload");
    }
    Instant leaseExpires = LicenseClient.parseTime(Json.asString(lease.get("expires_at")));
    Object interval = lease.get("heartbeat_interval_seconds");
    if (Json.asString(lease.get("lease_id")) == null || leaseExpires == null || !(interval instanceof BigDecimal) || ((BigDecimal) interval).signum() <= 0) {
      throw new VerificationError("MALFORMED_PAYLOAD", "the lease lacks lease_id, expires_at or heartbeat_interval_seconds");
    }
    if (!pool.get("pool_id").equals(lease.get("pool_id"))) {
      throw new VerificationError("WRONG_SUBJECT", "the lease is of pool " + lease.get("pool_id") + ", not " + pool.get("pool_id"));
    }
    if (!fingerprint.equals(lease.get("machine_fingerprint"))) throw new VerificationError("FINGERPRINT_MISMATCH", "the lease was made for another machine");
    if (!now.isBefore(leaseExpires)) throw new VerificationError("LEASE_EXPIRED", "the lease expired at " + lease.get("expires_at"));
    return new Verified(lease, pool);
  }

  /** The pool's relay key when it is an Ed25519 SPKI PEM whose key id is the pool's relay_key_id, else null. */
  private static VerificationKey relayKey(Map<String, Object> pool) {
    String pem = Json.asString(pool.get("relay_public_key"));
    if (pem == null) return null;
    try {
      VerificationKey key = VerificationKey.fromPem(pem);
      return key.algorithm().equals("Ed25519") && key.keyId().equals(pool.get("relay_key_id")) ? key : null;
    } catch (GeneralSecurityException | RuntimeException e) {
      return null;
    }
  }
}
