package example.licenceserver.client;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Relay leases (docs/clients.md, Relay leases) against the relay case list and a relay on the network, and the state
 * file's folder (docs/clients.md, The state file).
 */
final class RelayTest {
  private static final Path LIST = Path.of("..", "relay-conformance.json");

  private static Map<String, Object> list() throws IOException {
    return Json.object(Files.readString(LIST));
  }

  private static Map<String, Object> caseNamed(String name) throws IOException {
    for (Object c : Json.asList(list().get("cases"))) {
      if (name.equals(Json.asObject(c).get("name"))) return Json.asObject(Json.asObject(c).get("input"));
    }
    throw new AssertionError("no case " + name);
  }

  private static String reasonOf(String name) throws IOException {
    for (Object c : Json.asList(list().get("cases"))) {
      if (name.equals(Json.asObject(c).get("name"))) return Json.asString(Json.asObject(Json.asObject(c).get("expect")).get("reason"));
    }
    throw new AssertionError("no case " + name);
  }

  private static LicenseClient client(Map<String, Object> input, Path statePath) throws Exception {
    List<VerificationKey> keys = new ArrayList<>();
    Map<String, Object> named = Json.asObject(list().get("keys"));
    for (Object name : Json.asList(input.get("trusted_keys"))) keys.add(VerificationKey.fromEntry(Json.asObject(named.get(name))));
    Instant now = Instant.parse(Json.asString(input.get("now")));
    return new LicenseClient(new LicenseClient.Options()
        .serverUrl("http://127.0.0.1:9/")
        .statePath(statePath != null ? statePath : Files.createTempDirectory("relay-client-").resolve("state.json"))
        .appSalt("relay-test")
        .publicKeys(keys)
        .pinToShippedKeys(true)
        .fingerprint(Json.asString(input.get("machine_fingerprint")))
        .product(Json.asString(input.get("product")))
        .retries(0)
        .clock(() -> now));
  }

  /** A relay on the network answering with one fixed lease answer (the real relay: the online tests). */
  private static final class FixedRelay implements AutoCloseable {
    final HttpServer server;
    final List<String> paths = new ArrayList<>();
    final List<Object> bodies = new ArrayList<>();
    volatile boolean leased;

    FixedRelay(Object answer) throws IOException {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      server.createContext("/", exchange -> {
        String body;
        try (InputStream in = exchange.getRequestBody()) {
          body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        String path = exchange.getRequestURI().getPath();
        synchronized (this) {
          paths.add(path);
          bodies.add(Json.parse(body));
        }
        int status;
        String out;
        if (path.equals("/relay/v1/leases")) {
          leased = true;
          status = 201;
          out = Json.write(answer);
        } else if (!leased) {
          status = 400;
          out = "{\"error\":{\"code\":\"NOT_ACTIVATED\",\"message\":\"no lease\",\"details\":{}}}";
        } else if (path.equals("/relay/v1/leases/heartbeat")) {
          status = 200;
          out = Json.write(answer);
        } else if (path.equals("/relay/v1/leases/release")) {
          leased = false;
          status = 200;
          out = "{\"released\":1}";
        } else {
          status = 404;
          out = "{\"error\":{\"code\":\"NOT_FOUND\",\"message\":\"no route\",\"details\":{}}}";
        }
        byte[] bytes = out.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("content-type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream os = exchange.getResponseBody()) {
          os.write(bytes);
        }
      });
      server.start();
    }

    String url() {
      return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @Override
    public void close() {
      server.stop(0);
    }
  }

  @Test
  void theServersPoolAndLeaseVectorsAgree() throws Exception {
    int[] total = new int[1];
    List<String> failures = Conformance.run(Files.readString(Path.of("..", "..", "docs", "test-vectors", "relay.json")), total);
    Assert.check(failures.isEmpty() && total[0] >= 9, total[0] + " cases, failures: " + failures);
  }

  @Test
  void everyRelayCaseOfTheListAgrees() throws Exception {
    int[] total = new int[1];
    List<String> failures = Conformance.run(Files.readString(LIST), total);
    Assert.check(failures.isEmpty() && total[0] >= 15, total[0] + " cases, failures: " + failures);
  }

  @Test
  void leasesHeartbeatsAndReleasesAVerifiedSeat() throws Exception {
    Map<String, Object> valid = caseNamed("relay-valid");
    try (FixedRelay relay = new FixedRelay(valid.get("answer"))) {
      RelaySeat seat = client(valid, null).leaseFromRelay(relay.url(), "bench-7");
      Assert.equal("8a1f2b3c-4d5e-4f60-8172-93a4b5c6d7e8", seat.leaseId());
      Assert.equal("CAD_SUITE", Json.asObject(seat.pool().get("license")).get("product"));
      Assert.equal(100_000L, seat.heartbeatIntervalMillis());
      Map<String, Object> sent = new LinkedHashMap<>();
      sent.put("machine_fingerprint", valid.get("machine_fingerprint"));
      sent.put("hostname", "bench-7");
      Assert.check(Json.sameValue(sent, relay.bodies.get(0)), "sent " + relay.bodies.get(0));
      Assert.equal(seat.leaseId(), seat.heartbeat().get("lease_id"));
      Assert.equal(1L, seat.release());
      Assert.equal("NOT_ACTIVATED", Assert.raises(LicenceException.ServerError.class, seat::heartbeat).code());
      Assert.equal(List.of("/relay/v1/leases", "/relay/v1/leases/heartbeat", "/relay/v1/leases/release", "/relay/v1/leases/heartbeat"), relay.paths);
    }
  }

  @Test
  void refusesAForgedPoolOrALeaseSignedByAnotherKey() throws Exception {
    for (String name : List.of("relay-pool-forged", "relay-pool-unknown-key", "relay-lease-other-key", "relay-lease-vendor-key", "relay-lease-other-fingerprint")) {
      Map<String, Object> input = caseNamed(name);
      try (FixedRelay relay = new FixedRelay(input.get("answer"))) {
        LicenseClient client = client(input, null);
        String reason = Assert.raises(LicenceException.VerificationError.class, () -> client.leaseFromRelay(relay.url(), null)).reason();
        Assert.equal(name + " " + reasonOf(name), name + " " + reason);
      }
    }
  }

  @Test
  void theHeartbeatLoopStopsWhenTheRelaySaysTheSeatIsGone() throws Exception {
    Map<String, Object> valid = caseNamed("relay-valid");
    try (FixedRelay relay = new FixedRelay(valid.get("answer"))) {
      RelaySeat seat = client(valid, null).leaseFromRelay(relay.url(), null);
      // The fixture's interval is 100 s; 0.05 s is what a short RELAY_LEASE_SECONDS gives.
      Map<String, Object> shortLease = new LinkedHashMap<>(seat.lease());
      shortLease.put("heartbeat_interval_seconds", new BigDecimal("0.05"));
      seat.lease = shortLease;
      AtomicInteger beats = new AtomicInteger();
      AtomicReference<String> lost = new AtomicReference<>();
      RelaySeat.HeartbeatLoop loop = seat.startHeartbeat(lease -> {
        seat.lease = shortLease;
        if (beats.incrementAndGet() == 2) {
          try {
            seat.release();
          } catch (LicenceException e) {
            throw new IllegalStateException(e);
          }
        }
      }, null, e -> lost.set(e.code()));
      loop.join();
      Assert.equal(2, beats.get());
      Assert.equal("NOT_ACTIVATED", lost.get());
    }
  }

  @Test
  void aMissingStateFolderIsCreatedWithMode0700() throws Exception {
    Path root = Files.createTempDirectory("state-folder-");
    client(caseNamed("relay-valid"), root.resolve("app").resolve("licence").resolve("state.json"));
    Assert.equal("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(root.resolve("app"))));
    Assert.equal("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(root.resolve("app").resolve("licence"))));
  }

  @Test
  void aStateFolderThatCannotBeCreatedIsAStateErrorBeforeAnyNetworkCall() throws Exception {
    Path root = Files.createTempDirectory("state-folder-");
    Files.writeString(root.resolve("a-file"), "not a folder");
    Path statePath = root.resolve("a-file").resolve("state.json");
    AtomicInteger connections = new AtomicInteger();
    HttpClient counting = HttpClient.newBuilder().proxy(new ProxySelector() {
      @Override
      public List<java.net.Proxy> select(java.net.URI uri) {
        connections.incrementAndGet();
        return List.of(java.net.Proxy.NO_PROXY);
      }

      @Override
      public void connectFailed(java.net.URI uri, java.net.SocketAddress address, IOException e) {}
    }).build();
    Map<String, Object> valid = caseNamed("relay-valid");
    List<VerificationKey> keys = List.of(VerificationKey.fromEntry(Json.asObject(Json.asObject(list().get("keys")).get("ed25519"))));
    LicenseClient client = new LicenseClient(new LicenseClient.Options()
        .serverUrl("http://127.0.0.1:9/").statePath(statePath).appSalt("x").publicKeys(keys)
        .fingerprint(Json.asString(valid.get("machine_fingerprint"))).retries(0).httpClient(counting));
    LicenceException.StateError activate = Assert.raises(LicenceException.StateError.class, () -> client.activate("KEY", new LicenseClient.MachineInfo()));
    Assert.equal("STATE_PATH", activate.code());
    Assert.equal(statePath, activate.path());
    LicenceException.StateError lease = Assert.raises(LicenceException.StateError.class, () -> client.leaseFromRelay("http://127.0.0.1:9/", null));
    Assert.equal("STATE_PATH", lease.code());
    Assert.equal(0, connections.get());
  }
}
