package example.licenceserver.client;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A signing key made by a test: signs envelopes and endorsements the way the server does (docs/signing.md). */
final class TestKeys {
  final KeyPair pair;
  final VerificationKey key;

  private TestKeys(KeyPair pair) throws GeneralSecurityException {
    this.pair = pair;
    this.key = VerificationKey.of(pair.getPublic());
  }

  static TestKeys rsa() throws GeneralSecurityException {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
    generator.initialize(2048);
    return new TestKeys(generator.generateKeyPair());
  }

  static TestKeys ed25519() throws GeneralSecurityException {
    return new TestKeys(KeyPairGenerator.getInstance("Ed25519").generateKeyPair());
  }

  String id() {
    return key.keyId();
  }

  byte[] sign(byte[] message) throws GeneralSecurityException {
    Signature signer = Signature.getInstance(key.algorithm().equals("Ed25519") ? "Ed25519" : "SHA256withRSA");
    signer.initSign(pair.getPrivate());
    signer.update(message);
    return signer.sign();
  }

  /** {@code {payload, alg, key_id, signature}} over the exact bytes of {@code payload} written as JSON. */
  Map<String, Object> envelope(Map<String, Object> payload) throws GeneralSecurityException {
    byte[] bytes = Json.write(payload).getBytes(StandardCharsets.UTF_8);
    Map<String, Object> envelope = new LinkedHashMap<>();
    envelope.put("payload", VerificationKey.b64urlEncode(bytes));
    envelope.put("alg", key.alg());
    envelope.put("key_id", id());
    envelope.put("signature", VerificationKey.b64urlEncode(sign(bytes)));
    return envelope;
  }

  /** This key's endorsement of {@code other}. */
  Map<String, Object> endorse(TestKeys other) throws GeneralSecurityException {
    Map<String, Object> endorsement = new LinkedHashMap<>();
    endorsement.put("key_id", id());
    endorsement.put("signature", VerificationKey.b64urlEncode(sign(other.key.endorsementMessage())));
    return endorsement;
  }

  /** A {@code /public-keys} entry. */
  Map<String, Object> published(String status, List<Map<String, Object>> endorsements) {
    Map<String, Object> entry = new LinkedHashMap<>();
    entry.put("key_id", id());
    entry.put("algorithm", key.algorithm());
    entry.put("status", status);
    entry.put("public_key_pem", key.pem());
    entry.put("endorsements", new ArrayList<Object>(endorsements));
    return entry;
  }
}
