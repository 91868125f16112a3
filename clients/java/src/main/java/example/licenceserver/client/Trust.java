package example.licenceserver.client;

import example.licenceserver.client.LicenceException.VerificationError;
import java.security.GeneralSecurityException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Trusted keys and signed envelopes (docs/clients.md, Envelopes and trusted keys). A verifier decodes, verifies, then
 * parses: nothing here canonicalizes JSON.
 */
final class Trust {
  private Trust() {}

  /** A published key with its endorsements ({@code [{key_id, signature}]}). */
  static final class Published {
    final VerificationKey key;
    final List<Object> endorsements;

    Published(VerificationKey key, List<Object> endorsements) {
      this.key = key;
      this.endorsements = endorsements;
    }
  }

  /** The keys of a {@code /public-keys} list; malformed entries are skipped, the others still count. */
  static List<Published> published(List<Object> entries) {
    List<Published> out = new ArrayList<>();
    for (Object raw : entries) {
      try {
        Map<String, Object> entry = Json.asObject(raw);
        out.add(new Published(VerificationKey.fromEntry(entry), Json.asList(entry.get("endorsements"))));
      } catch (GeneralSecurityException | RuntimeException e) {
        // skipped
      }
    }
    return out;
  }

  /** The key ids a {@code /public-keys} list names as revoked. */
  static Set<String> revoked(List<Object> entries) {
    Set<String> out = new HashSet<>();
    for (Object raw : entries) {
      try {
        Map<String, Object> entry = Json.asObject(raw);
        if ("revoked".equals(entry.get("status"))) out.add(VerificationKey.fromEntry(entry).keyId());
      } catch (GeneralSecurityException | RuntimeException e) {
        // skipped
      }
    }
    return out;
  }

  /**
   * The shipped keys, then every published key endorsed by a trusted key or an offline root, repeated until nothing
   * changes (keys endorsing each other in a loop never start). A revoked key is dropped, shipped or not, and endorses
   * nothing.
   */
  static Map<String, VerificationKey> trustedKeys(
      Collection<VerificationKey> shipped, Collection<VerificationKey> roots, List<Published> published, Set<String> revoked) {
    Map<String, VerificationKey> trusted = new LinkedHashMap<>();
    Map<String, VerificationKey> endorsers = new HashMap<>();
    for (VerificationKey k : shipped) {
      if (!revoked.contains(k.keyId())) {
        trusted.put(k.keyId(), k);
        endorsers.put(k.keyId(), k);
      }
    }
    for (VerificationKey k : roots) if (!revoked.contains(k.keyId())) endorsers.put(k.keyId(), k);
    boolean changed = true;
    while (changed) {
      changed = false;
      for (Published candidate : published) {
        String id = candidate.key.keyId();
        if (trusted.containsKey(id) || revoked.contains(id)) continue;
        for (Object endorsement : candidate.endorsements) {
          if (endorses(endorsers, candidate.key, endorsement)) {
            trusted.put(id, candidate.key);
            endorsers.put(id, candidate.key);
            changed = true;
            break;
          }
        }
      }
    }
    return trusted;
  }

  /**
   * Why each published key that is not trusted is refused (docs/signing.md, Endorsed rotation): KEY_REVOKED,
   * UNENDORSED_KEY, INVALID_ENDORSEMENT (a trusted key's endorsement that does not verify), ENDORSEMENT_LOOP,
   * ENDORSER_REVOKED, else ENDORSER_UNKNOWN.
   */
  static Map<String, String> distrustReasons(
      Collection<VerificationKey> shipped, Collection<VerificationKey> roots, List<Published> published, Set<String> revoked) {
    Map<String, VerificationKey> trusted = trustedKeys(shipped, roots, published, revoked);
    Set<String> anchors = new HashSet<>(trusted.keySet());
    for (VerificationKey k : roots) if (!revoked.contains(k.keyId())) anchors.add(k.keyId());
    Map<String, List<String>> endorsersOf = new HashMap<>();
    for (Published p : published) {
      for (Object raw : p.endorsements) {
        Map<String, Object> e = Json.asObject(raw);
        String id = e == null ? null : Json.asString(e.get("key_id"));
        if (id != null) endorsersOf.computeIfAbsent(p.key.keyId(), x -> new ArrayList<>()).add(id);
      }
    }
    Map<String, String> reasons = new HashMap<>();
    for (Published p : published) {
      String id = p.key.keyId();
      List<String> endorsers = endorsersOf.getOrDefault(id, List.of());
      if (trusted.containsKey(id)) continue;
      if (revoked.contains(id)) reasons.put(id, "KEY_REVOKED");
      else if (endorsers.isEmpty()) reasons.put(id, "UNENDORSED_KEY");
      else if (endorsers.stream().anyMatch(anchors::contains)) reasons.put(id, "INVALID_ENDORSEMENT");
      else if (leadsBack(id, endorsersOf, anchors)) reasons.put(id, "ENDORSEMENT_LOOP");
      else if (endorsers.stream().anyMatch(revoked::contains)) reasons.put(id, "ENDORSER_REVOKED");
      else reasons.put(id, "ENDORSER_UNKNOWN");
    }
    return reasons;
  }

  /** Whether following untrusted endorsers from start comes back to start. */
  private static boolean leadsBack(String start, Map<String, List<String>> endorsersOf, Set<String> anchors) {
    Set<String> seen = new HashSet<>();
    Deque<String> queue = new ArrayDeque<>(endorsersOf.getOrDefault(start, List.of()));
    while (!queue.isEmpty()) {
      String id = queue.poll();
      if (id.equals(start)) return true;
      if (!seen.add(id) || anchors.contains(id)) continue;
      queue.addAll(endorsersOf.getOrDefault(id, List.of()));
    }
    return false;
  }

  private static boolean endorses(Map<String, VerificationKey> endorsers, VerificationKey key, Object raw) {
    Map<String, Object> endorsement = Json.asObject(raw);
    if (endorsement == null) return false;
    VerificationKey endorser = endorsers.get(Json.asString(endorsement.get("key_id")));
    if (endorser == null || endorser.keyId().equals(key.keyId())) return false;
    byte[] signature = VerificationKey.b64urlDecode(Json.asString(endorsement.get("signature")));
    return signature != null && endorser.verify(endorser.alg(), key.endorsementMessage(), signature);
  }

  /**
   * Decodes and verifies {@code {payload, alg, key_id, signature}} and answers the payload bytes (a JSON object): the
   * signed bytes are exactly the decoded payload.
   */
  static byte[] openEnvelope(Object raw, Map<String, VerificationKey> trusted, Set<String> revoked) throws VerificationError {
    Map<String, Object> members = Json.asObject(raw);
    if (members == null) throw new VerificationError("MALFORMED_ENVELOPE", "an envelope is a JSON object");
    if (members.size() != 4) {
      throw new VerificationError("MALFORMED_ENVELOPE", "an envelope has exactly the members payload, alg, key_id and signature");
    }
    Map<String, String> fields = new HashMap<>();
    for (String name : new String[] {"payload", "alg", "key_id", "signature"}) {
      String value = Json.asString(members.get(name));
      if (value == null) {
        throw new VerificationError("MALFORMED_ENVELOPE", "an envelope has exactly the strings payload, alg, key_id and signature");
      }
      fields.put(name, value);
    }
    String alg = fields.get("alg");
    if (!alg.equals("RS256") && !alg.equals("EdDSA")) throw new VerificationError("MALFORMED_ENVELOPE", "unknown alg \"" + alg + "\"");
    byte[] payload = VerificationKey.b64urlDecode(fields.get("payload"));
    byte[] signature = VerificationKey.b64urlDecode(fields.get("signature"));
    if (payload == null || signature == null) {
      throw new VerificationError("NON_CANONICAL_ENCODING", "payload and signature are base64url without padding");
    }
    String keyId = fields.get("key_id");
    if (revoked.contains(keyId)) {
      throw new VerificationError("KEY_REVOKED", "signed with key " + keyId + ", which the server lists as revoked");
    }
    VerificationKey key = trusted.get(keyId);
    if (key == null) throw new VerificationError("UNKNOWN_KEY", "signed with key " + keyId + ", which this client does not trust");
    if (!key.alg().equals(alg)) {
      throw new VerificationError("ALG_MISMATCH", "alg " + alg + " does not match key " + keyId + " (" + key.algorithm() + ")");
    }
    if (!key.verify(alg, payload, signature)) throw new VerificationError("INVALID_SIGNATURE", "the signature does not match the payload");
    Map<String, Object> object;
    try {
      object = Json.asObject(Json.parse(payload));
    } catch (IllegalArgumentException e) {
      object = null;
    }
    if (object == null) throw new VerificationError("MALFORMED_PAYLOAD", "the payload is not a JSON object");
    if (object.containsKey("key_id") && !keyId.equals(object.get("key_id"))) {
      throw new VerificationError("PAYLOAD_MISMATCH", "the payload names another key than the envelope");
    }
    return payload;
  }
}
