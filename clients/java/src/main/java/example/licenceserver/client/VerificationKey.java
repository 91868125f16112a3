package example.licenceserver.client;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.PublicKey;
import java.security.Signature;
import java.security.interfaces.EdECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.RSAPublicKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A public key that verifies licences: RSA (envelope alg {@code RS256}) or Ed25519 ({@code EdDSA}). Its key id is
 * always computed from the key (the first 16 hex digits of SHA-256 over the DER SubjectPublicKeyInfo), never taken
 * from input (docs/signing.md, Key ids).
 */
public final class VerificationKey {
  static final String ENDORSEMENT_PREFIX = "licence-server-endorsement-v1:";
  private static final Pattern B64URL = Pattern.compile("^[A-Za-z0-9_-]*$");
  private static final byte[] ED25519_SPKI_PREFIX = HexFormat.of().parseHex("302a300506032b6570032100");

  private final String keyId;
  private final String algorithm;
  private final PublicKey key;
  private final byte[] der;

  private VerificationKey(PublicKey key) throws GeneralSecurityException {
    if (key instanceof RSAPublicKey) {
      this.algorithm = "RSA-SHA256";
    } else if (key instanceof EdECPublicKey && "Ed25519".equals(((EdECPublicKey) key).getParams().getName())) {
      this.algorithm = "Ed25519";
    } else {
      throw new GeneralSecurityException("only RSA and Ed25519 public keys sign licences");
    }
    this.key = key;
    this.der = key.getEncoded();
    this.keyId = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(der)).substring(0, 16);
  }

  /** The key id (16 hex digits). */
  public String keyId() {
    return keyId;
  }

  /** "RSA-SHA256" or "Ed25519", as the server names them. */
  public String algorithm() {
    return algorithm;
  }

  /** The envelope's name of this key's algorithm. */
  public String alg() {
    return "Ed25519".equals(algorithm) ? "EdDSA" : "RS256";
  }

  /** The key as a PEM "PUBLIC KEY". */
  public String pem() {
    String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
    return "-----BEGIN PUBLIC KEY-----\n" + body + "\n-----END PUBLIC KEY-----\n";
  }

  /** Wraps a JDK public key (RSA or Ed25519). */
  public static VerificationKey of(PublicKey key) throws GeneralSecurityException {
    return new VerificationKey(key);
  }

  /** Reads a PEM "PUBLIC KEY" (DER SubjectPublicKeyInfo). */
  public static VerificationKey fromPem(String text) throws GeneralSecurityException {
    String trimmed = text == null ? "" : text.trim();
    String begin = "-----BEGIN PUBLIC KEY-----";
    String end = "-----END PUBLIC KEY-----";
    if (!trimmed.startsWith(begin) || !trimmed.endsWith(end)) throw new GeneralSecurityException("not a PEM public key");
    String body = trimmed.substring(begin.length(), trimmed.length() - end.length()).replaceAll("\\s", "");
    byte[] der;
    try {
      der = Base64.getDecoder().decode(body);
    } catch (IllegalArgumentException e) {
      throw new GeneralSecurityException("not a PEM public key", e);
    }
    return fromDer(der);
  }

  static VerificationKey fromDer(byte[] der) throws GeneralSecurityException {
    X509EncodedKeySpec spec = new X509EncodedKeySpec(der);
    boolean ed25519 = der.length == 44 && Arrays.equals(Arrays.copyOf(der, 12), ED25519_SPKI_PREFIX);
    return new VerificationKey(KeyFactory.getInstance(ed25519 ? "Ed25519" : "RSA").generatePublic(spec));
  }

  /**
   * Reads a {@code /public-keys} entry ({@code public_key_pem}) or a JWK (RSA, or OKP Ed25519). A key labelled with
   * another key's id ({@code key_id} or {@code kid}) is refused.
   */
  public static VerificationKey fromEntry(Map<String, Object> entry) throws GeneralSecurityException {
    if (entry == null) throw new GeneralSecurityException("a key is a JSON object");
    VerificationKey key;
    String pem = Json.asString(entry.get("public_key_pem"));
    String kty = Json.asString(entry.get("kty"));
    if (pem != null) {
      key = fromPem(pem);
    } else if ("RSA".equals(kty)) {
      byte[] n = b64urlDecode(Json.asString(entry.get("n")));
      byte[] e = b64urlDecode(Json.asString(entry.get("e")));
      if (n == null || e == null || e.length > 4) throw new GeneralSecurityException("malformed RSA JWK");
      RSAPublicKeySpec spec = new RSAPublicKeySpec(new BigInteger(1, n), new BigInteger(1, e));
      key = new VerificationKey(KeyFactory.getInstance("RSA").generatePublic(spec));
    } else if ("OKP".equals(kty) && "Ed25519".equals(entry.get("crv"))) {
      byte[] x = b64urlDecode(Json.asString(entry.get("x")));
      if (x == null || x.length != 32) throw new GeneralSecurityException("an Ed25519 key has 32 bytes");
      byte[] der = Arrays.copyOf(ED25519_SPKI_PREFIX, 44);
      System.arraycopy(x, 0, der, 12, 32);
      key = fromDer(der);
    } else {
      throw new GeneralSecurityException("unsupported public key");
    }
    for (String member : new String[] {"key_id", "kid"}) {
      if (entry.containsKey(member) && !key.keyId.equals(entry.get(member))) {
        throw new GeneralSecurityException("key " + key.keyId + " is labelled with another key's id");
      }
    }
    return key;
  }

  /** RFC 7638 thumbprint: SHA-256 over the JWK's required members in lexicographic order, without whitespace. */
  public byte[] thumbprint() {
    String text;
    if (key instanceof RSAPublicKey) {
      RSAPublicKey rsa = (RSAPublicKey) key;
      text = "{\"e\":\"" + b64urlEncode(unsigned(rsa.getPublicExponent())) + "\",\"kty\":\"RSA\",\"n\":\"" + b64urlEncode(unsigned(rsa.getModulus())) + "\"}";
    } else {
      text = "{\"crv\":\"Ed25519\",\"kty\":\"OKP\",\"x\":\"" + b64urlEncode(Arrays.copyOfRange(der, 12, 44)) + "\"}";
    }
    try {
      return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.US_ASCII));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** What a key signs to endorse this one: ASCII {@code licence-server-endorsement-v1:} + base64url(thumbprint). */
  public byte[] endorsementMessage() {
    return (ENDORSEMENT_PREFIX + b64urlEncode(thumbprint())).getBytes(StandardCharsets.US_ASCII);
  }

  /** Whether {@code signature} is this key's over {@code message}; false for another alg than the key's. */
  boolean verify(String alg, byte[] message, byte[] signature) {
    if (!alg().equals(alg)) return false;
    try {
      Signature verifier = Signature.getInstance("Ed25519".equals(algorithm) ? "Ed25519" : "SHA256withRSA");
      verifier.initVerify(key);
      verifier.update(message);
      return verifier.verify(signature);
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      return false;
    }
  }

  private static byte[] unsigned(BigInteger value) {
    byte[] raw = value.toByteArray();
    if (raw.length > 1 && raw[0] == 0) return Arrays.copyOfRange(raw, 1, raw.length);
    return raw;
  }

  static String b64urlEncode(byte[] raw) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
  }

  /** Strict base64url without padding: the standard alphabet, padding or stray bits answer null. */
  static byte[] b64urlDecode(String text) {
    if (text == null || !B64URL.matcher(text).matches() || text.length() % 4 == 1) return null;
    try {
      byte[] raw = Base64.getUrlDecoder().decode(text);
      return b64urlEncode(raw).equals(text) ? raw : null;
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  @Override
  public String toString() {
    return algorithm + " key " + keyId;
  }
}
