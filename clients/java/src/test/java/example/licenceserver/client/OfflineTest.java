package example.licenceserver.client;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Scenario cases with fresh keys made here: the offline check's rules, the validate answer's binding, and trust over
 * endorsed rotations (docs/clients.md), through the client's own code paths and without a network.
 */
final class OfflineTest {
  static final String FINGERPRINT = "sha256:" + "ab".repeat(32);
  static final Instant NOW = Instant.parse("2026-11-28T12:00:00Z");

  private Instant clock = NOW;

  private LicenseClient client(List<VerificationKey> shipped, boolean pin) throws IOException {
    Path folder = Files.createTempDirectory("licence-client-java-");
    return new LicenseClient(new LicenseClient.Options()
        .serverUrl("http://127.0.0.1:9/")
        .statePath(folder.resolve("state.json"))
        .appSalt("offline-test")
        .publicKeys(shipped)
        .product("POS_RETAIL")
        .fingerprint(FINGERPRINT)
        .pinToShippedKeys(pin)
        .retries(0)
        .keyRefreshInterval(java.time.Duration.ofDays(3650))
        .clock(() -> clock));
  }

  static Map<String, Object> licence(Map<String, Object> overrides) {
    Map<String, Object> l = new LinkedHashMap<>();
    l.put("license_key", "POS-AAAA-BBBB-CCCC-DDDD");
    l.put("product", "POS_RETAIL");
    l.put("license_type", "YEARLY");
    l.put("issued_at", "2026-11-01T00:00:00.000Z");
    l.put("expires_at", "2027-11-01T00:00:00.000Z");
    l.put("activated_at", "2026-11-28T11:00:00.000Z");
    l.put("machine_fingerprint", FINGERPRINT);
    l.put("grace_days", 7);
    l.put("features", List.of("reports"));
    l.put("signed_at", "2026-11-28T11:00:00.000Z");
    l.putAll(overrides);
    return l;
  }

  static String answer(TestKeys signer, Map<String, Object> licence) throws Exception {
    Map<String, Object> withKey = new LinkedHashMap<>(licence);
    withKey.put("key_id", signer.id());
    Map<String, Object> answer = new LinkedHashMap<>();
    answer.put("license", withKey);
    answer.put("signature", "RSA-SHA256:unused");
    answer.put("envelope", signer.envelope(withKey));
    return Json.write(answer);
  }

  @Test
  void anActivationIsKeptAndCheckedOffline() throws Exception {
    TestKeys k = TestKeys.ed25519();
    LicenseClient c = client(List.of(k.key), false);
    Assert.equal("NO_LICENSE", c.check().reason);
    License l = c.storeActivation(answer(k, licence(Map.of())));
    Assert.equal("POS-AAAA-BBBB-CCCC-DDDD", l.licenseKey());
    CheckResult r = c.check();
    Assert.check(r.ok, "accepted: " + r);
    Assert.equal("active", r.status);
    Assert.equal(List.of("reports"), r.license.features());
  }

  @Test
  void offlineRulesRefuseWhatTheyName() throws Exception {
    TestKeys k = TestKeys.rsa();
    LicenseClient c = client(List.of(k.key), false);
    c.storeActivation(answer(k, licence(Map.of("machine_fingerprint", "sha256:" + "cd".repeat(32)))));
    Assert.equal("FINGERPRINT_MISMATCH", c.check().reason);
    c.storeActivation(answer(k, licence(Map.of("product", "OTHER"))));
    Assert.equal("PRODUCT_MISMATCH", c.check().reason);
    c.storeActivation(answer(k, licence(Map.of())));
    clock = NOW.minusSeconds(3601 + 300);
    Assert.equal("CLOCK_TAMPERED", c.check().reason);
    clock = Instant.parse("2027-11-03T00:00:00Z");
    Assert.equal("grace", c.check().status);
    clock = Instant.parse("2027-11-09T00:00:00Z");
    Assert.equal("EXPIRED", c.check().reason);
  }

  @Test
  void aChangedStateFileIsTampered() throws Exception {
    TestKeys k = TestKeys.ed25519();
    Path folder = Files.createTempDirectory("licence-client-java-");
    LicenseClient c = new LicenseClient(new LicenseClient.Options().serverUrl("http://127.0.0.1:9/").statePath(folder.resolve("s.json"))
        .appSalt("x").publicKeys(List.of(k.key)).fingerprint(FINGERPRINT).retries(0).clock(() -> NOW));
    c.storeActivation(answer(k, licence(Map.of())));
    Path file = folder.resolve("s.json");
    Files.writeString(file, Files.readString(file).replace("\"seat_seen_at\":\"2026", "\"seat_seen_at\":\"2025"));
    Assert.equal("STATE_TAMPERED", c.check().reason);
    Files.writeString(file, "{nope");
    Assert.equal("STATE_CORRUPT", c.check().reason);
  }

  @Test
  void answersThatAreNotTheSignedLicenceAreRefused() throws Exception {
    TestKeys k = TestKeys.ed25519();
    LicenseClient c = client(List.of(k.key), false);
    Map<String, Object> doc = Json.object(answer(k, licence(Map.of())));
    Json.asObject(doc.get("license")).put("features", List.of("everything"));
    Assert.refused("PAYLOAD_MISMATCH", () -> c.storeActivation(Json.write(doc)));
    doc.remove("envelope");
    Assert.refused("UNSUPPORTED_FORMAT", () -> c.storeActivation(Json.write(doc)));
    Map<String, Object> tampered = Json.object(answer(k, licence(Map.of())));
    Map<String, Object> envelope = Json.asObject(tampered.get("envelope"));
    envelope.put("payload", VerificationKey.b64urlEncode(Json.write(licence(Map.of("grace_days", 99, "key_id", k.id()))).getBytes(StandardCharsets.UTF_8)));
    Assert.refused("INVALID_SIGNATURE", () -> c.storeActivation(Json.write(tampered)));
    envelope.put("payload", envelope.get("payload") + "=");
    Assert.refused("NON_CANONICAL_ENCODING", () -> c.storeActivation(Json.write(tampered)));
    envelope.put("alg", "HS256");
    Assert.refused("MALFORMED_ENVELOPE", () -> c.storeActivation(Json.write(tampered)));
    Assert.equal("NO_LICENSE", c.check().reason);
  }

  @Test
  void aValidateAnswerMustEchoTheNonceAndNameThisMachine() throws Exception {
    TestKeys k = TestKeys.ed25519();
    LicenseClient c = client(List.of(k.key), false);
    Map<String, Object> payload = new LinkedHashMap<>();
    payload.put("valid", true);
    payload.put("status", "active");
    payload.put("nonce", "n-1");
    payload.put("license_key", "POS-AAAA-BBBB-CCCC-DDDD");
    payload.put("machine_fingerprint", FINGERPRINT);
    payload.put("checked_at", "2026-11-28T12:00:00.000Z");
    payload.put("key_id", k.id());
    String answer = Json.write(Map.of("envelope", k.envelope(payload)));
    Assert.equal(Boolean.TRUE, c.verifyAnswer(answer, "n-1", "POS-AAAA-BBBB-CCCC-DDDD").get("valid"));
    Assert.refused("NONCE_MISMATCH", () -> c.verifyAnswer(answer, "n-2", "POS-AAAA-BBBB-CCCC-DDDD"));
    Assert.refused("WRONG_SUBJECT", () -> c.verifyAnswer(answer, "n-1", "POS-ZZZZ-BBBB-CCCC-DDDD"));
  }

  @Test
  void aLicenceFileExpiresOnItsOwnDate() throws Exception {
    TestKeys k = TestKeys.rsa();
    LicenseClient c = client(List.of(k.key), false);
    Map<String, Object> l = licence(Map.of("file_issued_at", "2026-11-28T11:30:00.000Z", "file_expires_at", "2026-12-28T11:30:00.000Z"));
    Map<String, Object> withKey = new LinkedHashMap<>(l);
    withKey.put("key_id", k.id());
    Map<String, Object> file = new LinkedHashMap<>();
    file.put("license", withKey);
    file.put("envelope", k.envelope(withKey));
    String text = LicenseClient.armor("LICENSE FILE", Json.write(file).getBytes(StandardCharsets.UTF_8));
    Assert.check(c.importLicenseFile(text).ok, "file accepted");
    Assert.equal("license_file", c.check().source);
    clock = Instant.parse("2026-12-29T00:00:00Z");
    Assert.equal("FILE_EXPIRED", c.check().reason);
    Assert.refused("MALFORMED_ENVELOPE", () -> c.importLicenseFile(text.replace("-----END", "x-----END")));
  }

  /** RSA -> Ed25519 -> RSA with only the first key shipped: followed by default, refused when pinned. */
  @Test
  void endorsedRotationsAreFollowedByDefault() throws Exception {
    TestKeys first = TestKeys.rsa();
    TestKeys second = TestKeys.ed25519();
    TestKeys third = TestKeys.rsa();
    List<Object> published = new ArrayList<>();
    published.add(third.published("active", List.of(second.endorse(third))));
    published.add(second.published("retired", List.of(first.endorse(second))));
    published.add(first.published("retired", List.of()));
    LicenseClient following = client(List.of(first.key), false);
    following.learnKeys(published);
    Assert.check(following.storeActivation(answer(third, licence(Map.of()))) != null, "third key followed");
    Assert.check(following.check().ok, "checked");
    LicenseClient pinned = client(List.of(first.key), true);
    pinned.learnKeys(published);
    Assert.refused("UNKNOWN_KEY", () -> pinned.storeActivation(answer(third, licence(Map.of()))));
    Assert.check(pinned.storeActivation(answer(first, licence(Map.of()))) != null, "the shipped key still works when pinned");
  }

  @Test
  void aStandInKeyAndRevokedKeysAreRefused() throws Exception {
    TestKeys shipped = TestKeys.rsa();
    TestKeys standIn = TestKeys.ed25519();
    TestKeys endorsedByRevoked = TestKeys.ed25519();
    LicenseClient c = client(List.of(shipped.key), false);
    List<Object> published = new ArrayList<>();
    published.add(standIn.published("active", List.of()));
    published.add(shipped.published("retired", List.of()));
    c.learnKeys(published);
    Assert.refused("UNKNOWN_KEY", () -> c.storeActivation(answer(standIn, licence(Map.of()))));
    List<Object> revoked = new ArrayList<>();
    revoked.add(endorsedByRevoked.published("active", List.of(shipped.endorse(endorsedByRevoked))));
    revoked.add(shipped.published("revoked", List.of()));
    c.learnKeys(revoked);
    Assert.refused("KEY_REVOKED", () -> c.storeActivation(answer(shipped, licence(Map.of()))));
    Assert.refused("UNKNOWN_KEY", () -> c.storeActivation(answer(endorsedByRevoked, licence(Map.of()))));
  }

  @Test
  void keysAreReadFromPemsJwksAndKeyLists() throws Exception {
    TestKeys rsa = TestKeys.rsa();
    TestKeys ed = TestKeys.ed25519();
    Assert.equal(rsa.id(), VerificationKey.fromPem(rsa.key.pem()).keyId());
    Assert.equal(ed.id(), VerificationKey.fromPem(ed.key.pem()).keyId());
    String list = Json.write(Map.of("keys", List.of(rsa.published("active", List.of()), ed.published("retired", List.of()))));
    Assert.equal(2, LicenseClient.parseKeyList(list).size());
    Map<String, Object> mislabelled = new LinkedHashMap<>(ed.published("active", List.of()));
    mislabelled.put("key_id", rsa.id());
    Assert.raises(java.security.GeneralSecurityException.class, () -> VerificationKey.fromEntry(mislabelled));
    Map<String, Object> okp = new LinkedHashMap<>();
    okp.put("kty", "OKP");
    okp.put("crv", "Ed25519");
    okp.put("x", VerificationKey.b64urlEncode(java.util.Arrays.copyOfRange(ed.pair.getPublic().getEncoded(), 12, 44)));
    Assert.equal(ed.id(), VerificationKey.fromEntry(okp).keyId());
  }
}
