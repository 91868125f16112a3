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

  /** A verified pool and its relay key. */
  static final class VerifiedPool {
    final Map<String, Object> pool;
    final VerificationKey relayKey;

    VerifiedPool(Map<String, Object> pool, VerificationKey relayKey) {
      this.pool = pool;
      this.relayKey = relayKey;
    }
  }

  /**
   * Checks a pool file, in this order: the armor and its pool object (MALFORMED_POOL_FILE), the envelope with the vendor
   * keys {@code trusted} (SIGNATURE_INVALID, whatever the envelope's own reason), the pool equal to the payload
   * (POOL_MISMATCH), its members (MALFORMED_POOL_FILE), the relay key named by its key id (WRONG_RELAY_KEY), product
   * (PRODUCT_MISMATCH), expiry (POOL_EXPIRED): the names of docs/test-vectors/relay.json.
   */
  static VerifiedPool verifyPool(String poolFile, Map<String, VerificationKey> trusted, Set<String> revoked, String product, Instant now) throws VerificationError {
    String text = LicenseClient.dearmor(POOL_LABEL, poolFile);
    Map<String, Object> file = text == null ? null : Json.object(text);
    if (file == null || Json.asObject(file.get("pool")) == null) throw new VerificationError("MALFORMED_POOL_FILE", "not a relay pool file with a pool object");
    Map<String, Object> pool;
    try {
      pool = Json.asObject(Json.parse(Trust.openEnvelope(file.get("envelope"), trusted, revoked)));
    } catch (VerificationError e) {
      throw new VerificationError("SIGNATURE_INVALID", "the pool's envelope is refused (" + e.getMessage() + ")");
    }
    if (!Json.sameValue(file.get("pool"), pool)) throw new VerificationError("POOL_MISMATCH", "the pool is not exactly the envelope's signed payload");
    Map<String, Object> license = Json.asObject(pool.get("license"));
    Instant expires = LicenseClient.parseTime(Json.asString(pool.get("expires_at")));
    if (Json.asString(pool.get("pool_id")) == null || !(pool.get("seats") instanceof BigDecimal) || license == null
        || Json.asString(license.get("machine_fingerprint")) == null || expires == null) {
      throw new VerificationError("MALFORMED_POOL_FILE", "the signed pool lacks pool_id, seats, expires_at or license");
    }
    VerificationKey relayKey = relayKey(pool);
    if (relayKey == null) throw new VerificationError("WRONG_RELAY_KEY", "the pool names a relay key whose key id is not relay_key_id");
    if (product != null && !product.equals(license.get("product"))) {
      throw new VerificationError("PRODUCT_MISMATCH", "the pool lends " + license.get("product") + ", not " + product);
    }
    if (!now.isBefore(expires)) throw new VerificationError("POOL_EXPIRED", "the pool expired at " + pool.get("expires_at"));
    return new VerifiedPool(pool, relayKey);
  }

  /**
   * Checks a {@code POST /relay/v1/leases} answer: the pool file ({@link #verifyPool}), then the lease envelope with the
   * pool's relay key and no other (SIGNATURE_INVALID), the lease equal to its payload, of that pool and for this machine
   * (LEASE_MISMATCH), not expired (LEASE_EXPIRED).
   */
  static Verified verify(Map<String, Object> answer, Map<String, VerificationKey> trusted, Set<String> revoked, String fingerprint, String product, Instant now)
      throws VerificationError {
    if (answer == null) throw new VerificationError("MALFORMED_POOL_FILE", "the relay answered no lease");
    VerifiedPool verified = verifyPool(Json.asString(answer.get("pool_file")), trusted, revoked, product, now);
    Map<String, Object> pool = verified.pool;
    VerificationKey relayKey = verified.relayKey;
    Map<String, Object> lease;
    try {
      // The relay key is the only key a lease may carry: a vendor key, trusted for pools, signs no lease.
      lease = Json.asObject(Json.parse(Trust.openEnvelope(answer.get("envelope"), Map.of(relayKey.keyId(), relayKey), Set.of())));
    } catch (VerificationError e) {
      throw new VerificationError("SIGNATURE_INVALID", "the lease's envelope is refused (" + e.getMessage() + ")");
    }
    if (!answer.containsKey("lease") || !Json.sameValue(answer.get("lease"), lease)) {
      throw new VerificationError("LEASE_MISMATCH", "the lease is not exactly the envelope's signed payload");
    }
    Instant leaseExpires = LicenseClient.parseTime(Json.asString(lease.get("expires_at")));
    Object interval = lease.get("heartbeat_interval_seconds");
    if (Json.asString(lease.get("lease_id")) == null || leaseExpires == null || !(interval instanceof BigDecimal) || ((BigDecimal) interval).signum() <= 0) {
      throw new VerificationError("LEASE_MISMATCH", "the lease lacks lease_id, expires_at or heartbeat_interval_seconds");
    }
    if (!pool.get("pool_id").equals(lease.get("pool_id")) || !fingerprint.equals(lease.get("machine_fingerprint"))) {
      throw new VerificationError("LEASE_MISMATCH", "the lease is for another pool or another machine");
    }
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
