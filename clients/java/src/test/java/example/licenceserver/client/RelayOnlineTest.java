package example.licenceserver.client;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.KeyPairGenerator;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Leases from a real relay (this repository's build) lending a pool the vendor server issued (docs/clients.md, Relay
 * leases), started by clients/relay-for-tests.mjs, and a pool the vendor server issued checked by this client's code.
 */
final class RelayOnlineTest {
  /** A real relay; {@code forged}: its pool re-signed by a key of its own. */
  private static final class Relay implements AutoCloseable {
    final Process process;
    final String url;
    final String poolId;

    Relay(String licenseKey, boolean forged) throws Exception {
      OnlineTest.Server s = OnlineTest.server();
      List<String> command = new ArrayList<>(List.of("node", Path.of("..", "relay-for-tests.mjs").toString(), "--server", s.url, "--api-key", s.apiKey,
          "--license", licenseKey, "--seats", "2"));
      if (forged) command.add("--forged");
      process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
      String line = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)).readLine();
      if (line == null) throw new AssertionError("relay-for-tests exited " + process.waitFor());
      Map<String, Object> started = Json.object(line);
      url = (String) started.get("url");
      poolId = (String) started.get("pool_id");
    }

    @Override
    public void close() throws java.io.IOException {
      process.getOutputStream().close();
      try {
        if (!process.waitFor(30, TimeUnit.SECONDS)) process.destroyForcibly();
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }

  private static String licenceOfFiveSeats() throws Exception {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("product_code", "POS_RETAIL");
    body.put("license_type", "YEARLY");
    body.put("customer_name", "Klijent d.o.o.");
    body.put("limits", Map.of("max_installations", 5));
    return (String) OnlineTest.call("POST", "/api/v1/admin/licenses", body, true).get("license_key");
  }

  @Test
  void aPoolTheVendorServerIssuedVerifiesAndACopyWithMoreSeatsDoesNot() throws Exception {
    String key = licenceOfFiveSeats();
    byte[] der = KeyPairGenerator.getInstance("Ed25519").generateKeyPair().getPublic().getEncoded();
    String pem = "-----BEGIN PUBLIC KEY-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der) + "\n-----END PUBLIC KEY-----\n";
    Map<String, Object> request = new LinkedHashMap<>();
    request.put("license_key", key);
    request.put("relay_fingerprint", OnlineTest.fingerprint("relay-java-machine"));
    request.put("relay_public_key", pem);
    request.put("seats", 3);
    Map<String, Object> issued = OnlineTest.call("POST", "/api/v1/admin/relay-pools",
        Map.of("request", LicenseClient.armor("RELAY POOL REQUEST", Json.write(request).getBytes(StandardCharsets.UTF_8))), true);
    LicenseClient client = OnlineTest.client("relay-java-pool", "POS_RETAIL", null);
    Map<String, Object> pool = client.verifyRelayPool((String) issued.get("pool_file"), StateFile.empty());
    Assert.equal(issued.get("pool_id"), pool.get("pool_id"));
    Assert.equal(key, Json.asObject(pool.get("license")).get("license_key"));
    Map<String, Object> document = new LinkedHashMap<>(Json.object(LicenseClient.dearmor("RELAY POOL", (String) issued.get("pool_file"))));
    Map<String, Object> more = new LinkedHashMap<>(Json.asObject(document.get("pool")));
    more.put("seats", 300);
    document.put("pool", more);
    String forged = LicenseClient.armor("RELAY POOL", Json.write(document).getBytes(StandardCharsets.UTF_8));
    Assert.refused("POOL_MISMATCH", () -> client.verifyRelayPool(forged, StateFile.empty()));
  }

  @Test
  void leasesRenewsRefusesOneMoreThanThePoolAndTakesAReleasedSeatBack() throws Exception {
    try (Relay relay = new Relay(licenceOfFiveSeats(), false)) {
      RelaySeat first = OnlineTest.client("relay-java-1", "POS_RETAIL", null).leaseFromRelay(relay.url, "bench-1");
      Assert.equal(relay.poolId, first.pool().get("pool_id"));
      Assert.equal(OnlineTest.fingerprint("relay-java-1"), first.lease().get("machine_fingerprint"));
      Assert.equal(first.leaseId(), OnlineTest.client("relay-java-1", "POS_RETAIL", null).leaseFromRelay(relay.url, null).leaseId());
      Assert.equal(first.leaseId(), first.heartbeat().get("lease_id"));
      OnlineTest.client("relay-java-2", "POS_RETAIL", null).leaseFromRelay(relay.url, null);
      LicenseClient third = OnlineTest.client("relay-java-3", "POS_RETAIL", null);
      Assert.equal("ACTIVATION_LIMIT_REACHED", Assert.raises(LicenceException.ServerError.class, () -> third.leaseFromRelay(relay.url, null)).code());
      Assert.equal(1L, first.release());
      Assert.equal("NOT_ACTIVATED", Assert.raises(LicenceException.ServerError.class, first::heartbeat).code());
      Assert.equal(relay.poolId, third.leaseFromRelay(relay.url, null).pool().get("pool_id"));
    }
  }

  @Test
  void refusesARelayWhosePoolAnotherKeySigned() throws Exception {
    try (Relay relay = new Relay(licenceOfFiveSeats(), true)) {
      LicenseClient client = OnlineTest.client("relay-java-9", "POS_RETAIL", null);
      Assert.refused("SIGNATURE_INVALID", () -> client.leaseFromRelay(relay.url, null));
    }
  }
}
