package example.licenceserver.client;

import example.licenceserver.client.LicenceException.VerificationError;
import java.io.IOException;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Runs a conformance list (clients/conformance-format.md) through this client's own code paths: the shared list
 * (docs/test-vectors/conformance.json: {@code kind} beside {@code input}, keys named from the document's {@code keys})
 * and scenario cases ({@code input.kind}, {@code trust}, {@code context}). Prints the cases that disagree; exit 1 when
 * there is one.
 */
public final class Conformance {
  private Conformance() {}

  /** The disagreements of a list, one line each; {@code total[0]} receives the number of cases. */
  public static List<String> run(String document, int[] total) throws IOException {
    Map<String, Object> list = Json.object(document);
    if (list == null) throw new IOException("not a conformance list");
    if (list.containsKey("pools")) return runRelayVectors(list, total);
    Map<String, Object> named = Json.asObject(list.get("keys"));
    List<Object> cases = Json.asList(list.get("cases"));
    total[0] = cases.size();
    List<String> failures = new ArrayList<>();
    for (Object raw : cases) {
      Map<String, Object> c = Json.asObject(raw);
      String name = String.valueOf(c.get("name"));
      Path folder = Files.createTempDirectory("licence-conformance-");
      try {
        String[] got = runCase(c, named == null ? Map.of() : named, folder);
        Map<String, Object> expect = Json.asObject(c.get("expect"));
        String wantVerdict = Json.asString(expect.get("verdict"));
        String wantReason = Json.asString(expect.get("reason")) == null ? "" : Json.asString(expect.get("reason"));
        String wantStatus = Json.asString(expect.get("status"));
        if (!got[0].equals(wantVerdict) || !got[1].equals(wantReason) || (wantStatus != null && !wantStatus.equals(got[2]))) {
          failures.add(name + ": expected " + wantVerdict + " " + wantReason + (wantStatus == null ? "" : " " + wantStatus) + ", got " + String.join(" ", got));
        }
      } catch (Exception e) {
        failures.add(name + ": " + e);
      } finally {
        try (Stream<Path> files = Files.walk(folder)) {
          files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
      }
    }
    return failures;
  }

  private static List<VerificationKey> keys(List<Object> entries) throws GeneralSecurityException {
    List<VerificationKey> out = new ArrayList<>();
    for (Object entry : entries) {
      out.add(entry instanceof String ? VerificationKey.fromPem((String) entry) : VerificationKey.fromEntry(Json.asObject(entry)));
    }
    return out;
  }

  private static List<VerificationKey> namedKeys(Map<String, Object> named, List<Object> names) throws GeneralSecurityException {
    List<Object> entries = new ArrayList<>();
    for (Object name : names) {
      if (!named.containsKey(name)) throw new GeneralSecurityException("no key named " + name);
      entries.add(named.get(name));
    }
    return keys(entries);
  }

  /** A client that cannot reach a network: every request fails at once. */
  private static LicenseClient offlineClient(List<VerificationKey> shipped, List<VerificationKey> roots, String product, String fingerprint, Instant now, Path folder) {
    HttpClient unreachable = HttpClient.newBuilder().proxy(ProxySelector.of(new java.net.InetSocketAddress("127.0.0.1", 9))).build();
    LicenseClient.Options options = new LicenseClient.Options()
        .serverUrl("http://127.0.0.1:9/")
        .statePath(folder.resolve("state.json"))
        .appSalt("conformance")
        .publicKeys(shipped)
        .rootKeys(roots)
        .product(product)
        .fingerprint(fingerprint)
        .retries(0)
        .httpClient(unreachable);
    if (now != null) options.clock(() -> now);
    return new LicenseClient(options);
  }

  private static String[] runCase(Map<String, Object> c, Map<String, Object> named, Path folder) throws Exception {
    Map<String, Object> input = Json.asObject(c.get("input"));
    String kind = Json.asString(c.get("kind"));
    if (kind != null) {
      if (kind.equals("key_trust")) {
        List<VerificationKey> shipped = namedKeys(named, Json.asList(input.get("shipped_keys")));
        List<VerificationKey> roots = namedKeys(named, Json.asList(input.get("root_keys")));
        List<Trust.Published> published = Trust.published(Json.asList(input.get("published")));
        Set<String> revoked = Trust.revoked(Json.asList(input.get("published")));
        String keyId = Json.asString(input.get("key_id"));
        if (Trust.trustedKeys(shipped, roots, published, revoked).containsKey(keyId)) return new String[] {"trusted", "", ""};
        String reason = Trust.distrustReasons(shipped, roots, published, revoked).getOrDefault(keyId, "UNKNOWN_KEY");
        return new String[] {"refused", reason, ""};
      }
      if (kind.equals("signed_answer")) {
        LicenseClient client = offlineClient(namedKeys(named, Json.asList(input.get("trusted_keys"))), List.of(), null,
            Json.asString(input.get("machine_fingerprint")), null, folder);
        try {
          client.verifyAnswer(Json.write(input.get("answer")), Json.asString(input.get("nonce")), Json.asString(input.get("license_key")));
        } catch (VerificationError e) {
          return new String[] {"refuse", e.reason(), ""};
        }
        return new String[] {"accept", "", ""};
      }
      if (kind.equals("relay_lease")) {
        // A relay's lease answer, verified as leaseFromRelay() does.
        Instant now = OffsetDateTime.parse(Json.asString(input.get("now"))).toInstant();
        LicenseClient client = offlineClient(namedKeys(named, Json.asList(input.get("trusted_keys"))), List.of(),
            Json.asString(input.get("product")), Json.asString(input.get("machine_fingerprint")), now, folder);
        Map<String, Object> state = new LinkedHashMap<>(StateFile.empty());
        state.put("revoked_key_ids", new ArrayList<>(Json.asList(input.get("revoked_keys"))));
        try {
          client.verifyRelayAnswer(Json.write(input.get("answer")), state);
        } catch (VerificationError e) {
          return new String[] {"refuse", e.reason(), ""};
        }
        return new String[] {"accept", "", ""};
      }
      if (kind.equals("trial")) {
        Instant now = OffsetDateTime.parse(Json.asString(input.get("now"))).toInstant();
        LicenseClient client = offlineClient(namedKeys(named, Json.asList(input.get("trusted_keys"))), List.of(),
            Json.asString(input.get("product")), Json.asString(input.get("machine_fingerprint")), now, folder);
        CheckResult result;
        try {
          client.storeActivation(Json.write(input.get("answer")));
          result = client.check();
        } catch (VerificationError e) {
          return new String[] {"refuse", e.reason(), ""};
        }
        return result.ok ? new String[] {"accept", "", result.status} : new String[] {"refuse", result.reason, ""};
      }
      LicenseClient client = offlineClient(namedKeys(named, Json.asList(input.get("trusted_keys"))), List.of(), null, null, null, folder);
      Map<String, Object> state = new LinkedHashMap<>(StateFile.empty());
      state.put("revoked_key_ids", new ArrayList<>(Json.asList(input.get("revoked_keys"))));
      try {
        if (kind.equals("envelope")) client.open(input.get("envelope"), state);
        else if (kind.equals("license_file")) client.openLicenseFile(Json.asString(input.get("license_file")), state);
        else throw new IllegalArgumentException("unknown case kind " + kind);
      } catch (VerificationError e) {
        return new String[] {"refuse", e.reason(), ""};
      }
      return new String[] {"accept", "", ""};
    }
    Map<String, Object> trust = Json.asObject(c.get("trust"));
    Map<String, Object> context = Json.asObject(c.get("context"));
    Instant now = OffsetDateTime.parse(Json.asString(context.get("now"))).toInstant();
    LicenseClient client = offlineClient(
        keys(Json.asList(trust.get("shipped_keys"))), keys(Json.asList(trust.get("root_keys"))),
        Json.asString(context.get("product")), Json.asString(context.get("machine_fingerprint")), now, folder);
    Map<String, Object> published = Json.asObject(trust.get("published_keys"));
    if (published != null) client.learnKeys(Json.asList(published.get("keys")));
    CheckResult result;
    try {
      switch (String.valueOf(input.get("kind"))) {
        case "license_file":
          result = client.importLicenseFile(Json.asString(input.get("text")));
          break;
        case "activation":
          client.storeActivation(Json.write(input.get("answer")));
          result = client.check();
          break;
        case "validation":
          client.verifyAnswer(Json.write(input.get("answer")), Json.asString(input.get("nonce")), Json.asString(input.get("license_key")));
          return new String[] {"accept", "", ""};
        default:
          throw new IllegalArgumentException("unknown input kind " + input.get("kind"));
      }
    } catch (VerificationError e) {
      return new String[] {"refuse", e.reason(), ""};
    }
    return result.ok ? new String[] {"accept", "", result.status} : new String[] {"refuse", result.reason, ""};
  }

  /** docs/test-vectors/relay.json: pool files, then lease answers, checked at its {@code now} with its vendor keys. */
  private static List<String> runRelayVectors(Map<String, Object> vectors, int[] total) throws IOException {
    List<String> failures = new ArrayList<>();
    Instant now = OffsetDateTime.parse(Json.asString(vectors.get("now"))).toInstant();
    Path folder = Files.createTempDirectory("licence-conformance-");
    try {
      List<VerificationKey> shipped = keys(Json.asList(Json.asObject(vectors.get("vendor_jwks")).get("keys")));
      for (String kind : List.of("pools", "leases")) {
        for (Object raw : Json.asList(vectors.get(kind))) {
          Map<String, Object> c = Json.asObject(raw);
          total[0]++;
          String fingerprint = Json.asString(c.get("machine_fingerprint"));
          LicenseClient client = offlineClient(shipped, List.of(), null, fingerprint, now, folder);
          String[] got = {"accept", ""};
          try {
            if (kind.equals("pools")) client.verifyRelayPool(Json.asString(c.get("pool_file")), StateFile.empty());
            else client.verifyRelayAnswer(Json.write(c.get("answer")), StateFile.empty());
          } catch (VerificationError e) {
            got = new String[] {"refuse", e.reason()};
          }
          Map<String, Object> expect = Json.asObject(c.get("expect"));
          String wantReason = Json.asString(expect.get("reason")) == null ? "" : Json.asString(expect.get("reason"));
          if (!got[0].equals(expect.get("verdict")) || !got[1].equals(wantReason)) {
            failures.add(kind + " " + c.get("name") + ": expected " + expect.get("verdict") + " " + wantReason + ", got " + String.join(" ", got));
          }
        }
      }
    } catch (java.security.GeneralSecurityException e) {
      throw new IOException("relay.json: " + e.getMessage(), e);
    } finally {
      try (Stream<Path> files = Files.walk(folder)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    return failures;
  }

  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      System.err.println("usage: java example.licenceserver.client.Conformance <conformance.json>");
      System.exit(2);
    }
    int[] total = new int[1];
    List<String> failures = run(Files.readString(Path.of(args[0])), total);
    for (String failure : failures) System.out.println("FAIL " + failure);
    System.out.println((total[0] - failures.size()) + " passed, " + failures.size() + " failed");
    System.exit(failures.isEmpty() ? 0 : 1);
  }
}
