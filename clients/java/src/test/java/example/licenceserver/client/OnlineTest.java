package example.licenceserver.client;

import com.sun.net.httpserver.HttpServer;
import example.licenceserver.client.LicenceException.ServerError;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Against a real server: this repository's build ({@code npm run build} at the root first) started as a process on a
 * database the test creates on TEST_DATABASE_URL's server (default postgres://postgres@127.0.0.1:5432/postgres) with
 * {@code createdb} and drops afterwards with {@code dropdb}, as the Go and Python clients' tests do.
 */
final class OnlineTest {
  private static Server server;

  static final class Server {
    final String url;
    final String apiKey;
    final String database;
    final Path dataDir;
    final Process process;
    final Path log;

    Server(String url, String apiKey, String database, Path dataDir, Process process, Path log) {
      this.url = url;
      this.apiKey = apiKey;
      this.database = database;
      this.dataDir = dataDir;
      this.process = process;
      this.log = log;
    }
  }

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private static List<String> pgArgs() {
    URI admin = URI.create(System.getenv().getOrDefault("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"));
    String user = admin.getUserInfo() == null ? "postgres" : admin.getUserInfo().split(":")[0];
    return List.of("-h", admin.getHost(), "-p", String.valueOf(admin.getPort() < 0 ? 5432 : admin.getPort()), "-U", user);
  }

  private static void pg(String command, String... args) throws IOException, InterruptedException {
    List<String> argv = new ArrayList<>(List.of(command));
    argv.addAll(pgArgs());
    argv.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(argv).redirectErrorStream(true);
    URI admin = URI.create(System.getenv().getOrDefault("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"));
    if (admin.getUserInfo() != null && admin.getUserInfo().contains(":")) builder.environment().put("PGPASSWORD", admin.getUserInfo().split(":", 2)[1]);
    Process p = builder.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) throw new IOException(command + " failed: " + out);
  }

  static synchronized Server server() throws Exception {
    if (server != null) return server;
    Path root = Path.of("..", "..").toAbsolutePath().normalize();
    Path main = root.resolve("dist/src/main.js");
    if (!Files.exists(main)) throw new IllegalStateException("build the server first (npm run build at the repository root)");
    int port;
    try (ServerSocket socket = new ServerSocket(0, 0, java.net.InetAddress.getLoopbackAddress())) {
      port = socket.getLocalPort();
    }
    byte[] suffix = new byte[4];
    new SecureRandom().nextBytes(suffix);
    String hex = HexFormat.of().formatHex(suffix);
    String database = "licence_client_java_test_" + hex;
    String apiKey = "test-key-" + hex + hex;
    Path dataDir = Files.createTempDirectory("licence-client-java-");
    pg("createdb", database);
    URI admin = URI.create(System.getenv().getOrDefault("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"));
    String databaseUrl = admin.getScheme() + "://" + (admin.getRawUserInfo() == null ? "" : admin.getRawUserInfo() + "@") + admin.getHost() + ":" + (admin.getPort() < 0 ? 5432 : admin.getPort()) + "/" + database;
    Path log = dataDir.resolve("server.log");
    ProcessBuilder builder = new ProcessBuilder("node", main.toString()).directory(root.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
    Map<String, String> env = builder.environment();
    String path = env.get("PATH");
    env.clear();
    env.put("PATH", path);
    env.put("HOME", System.getProperty("java.io.tmpdir"));
    env.put("PORT", String.valueOf(port));
    env.put("DATA_DIR", dataDir.toString());
    env.put("DATABASE_URL", databaseUrl);
    env.put("API_KEY", apiKey);
    env.put("ADMIN_PASSWORD", "client-test-password");
    env.put("LOG_LEVEL", "warn");
    for (String limit : new String[] {"ACTIVATE", "DEACTIVATE", "VALIDATE", "HEARTBEAT"}) env.put("RATE_LIMIT_" + limit, "1000");
    Process process = builder.start();
    server = new Server("http://127.0.0.1:" + port, apiKey, database, dataDir, process, log);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (true) {
      if (!process.isAlive()) throw new IllegalStateException("server exited during start-up: " + Files.readString(log));
      if (System.nanoTime() > deadline) throw new IllegalStateException("server did not start: " + Files.readString(log));
      try {
        if (HTTP.send(HttpRequest.newBuilder(URI.create(server.url + "/api/v1/health")).build(), HttpResponse.BodyHandlers.discarding()).statusCode() == 200) return server;
      } catch (IOException e) {
        // not yet
      }
      Thread.sleep(150);
    }
  }

  static synchronized void stopServer() throws Exception {
    if (server == null) return;
    server.process.destroy();
    if (!server.process.waitFor(20, TimeUnit.SECONDS)) server.process.destroyForcibly().waitFor();
    pg("dropdb", "--if-exists", "--force", server.database);
    try (var files = Files.walk(server.dataDir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
    server = null;
  }

  /** An admin or client call to the real server; answers the parsed body (null for 204) and fails on anything but 2xx. */
  static Map<String, Object> call(String method, String path, Object body, boolean admin) throws Exception {
    Server s = server();
    HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(s.url + path)).method(method,
        body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(Json.write(body)));
    if (body != null) builder.header("content-type", "application/json");
    if (admin) builder.header("x-api-key", s.apiKey);
    HttpResponse<String> response = HTTP.send(builder.build(), HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() >= 300) throw new AssertionError(method + " " + path + ": " + response.statusCode() + " " + response.body());
    return response.statusCode() == 204 ? null : Json.object(response.body());
  }

  static String createLicense(String product) throws Exception {
    return (String) createLicenseRecord(product).get("license_key");
  }

  static Map<String, Object> createLicenseRecord(String product) throws Exception {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("product_code", product);
    body.put("license_type", "YEARLY");
    body.put("customer_name", "Klijent d.o.o.");
    return call("POST", "/api/v1/admin/licenses", body, true);
  }

  static String fingerprint(String seed) {
    byte[] raw = new byte[32];
    byte[] text = seed.getBytes(StandardCharsets.UTF_8);
    System.arraycopy(text, 0, raw, 0, Math.min(32, text.length));
    return "sha256:" + HexFormat.of().formatHex(raw);
  }

  /** A client that ships the key the server signs with now (GET /api/v1/public-key), default options otherwise. */
  static LicenseClient client(String seed, String product, String serverUrl) throws Exception {
    String pem = (String) call("GET", "/api/v1/public-key", null, false).get("public_key_pem");
    return new LicenseClient(new LicenseClient.Options()
        .serverUrl(serverUrl == null ? server().url : serverUrl)
        .statePath(Files.createTempDirectory("licence-client-java-").resolve("state.json"))
        .appSalt("online-test")
        .publicKeys(List.of(VerificationKey.fromPem(pem)))
        .product(product)
        .fingerprint(fingerprint(seed))
        .retries(1)
        .timeout(Duration.ofSeconds(10)));
  }

  @Test
  void activateValidateLicenceFileHeartbeatDeactivate() throws Exception {
    String key = createLicense("POS_RETAIL");
    LicenseClient c = client("java-flow-1", "POS_RETAIL", null);
    License licence = c.activate(key, new LicenseClient.MachineInfo("till-01", null, "1.4.0"));
    Assert.equal(key, licence.licenseKey());
    Assert.check(c.check().ok, "checked offline after activation");
    Answers.Validation v = c.validate();
    Assert.check(v.valid(), "valid");
    Assert.equal("active", v.status());
    Answers.LicenseFile file = c.licenseFile();
    Assert.check(file.licenseFile().startsWith("-----BEGIN LICENSE FILE-----"), "a licence file");
    Assert.equal("license_file", c.check().source);
    Assert.check(c.heartbeat().valid(), "heartbeat");
    Assert.check(c.deactivate().canReactivate(), "deactivated");
    Assert.equal("NO_LICENSE", c.check().reason);
    Assert.equal("NOT_ACTIVATED", Assert.raises(ServerError.class, c::validate).code());
  }

  @Test
  void aRevokedLicenceIsInvalidatedOnTheNextValidate() throws Exception {
    Map<String, Object> record = createLicenseRecord("POS_RETAIL");
    LicenseClient c = client("java-revoke-1", "POS_RETAIL", null);
    c.activate((String) record.get("license_key"), null);
    call("POST", "/api/v1/admin/licenses/" + record.get("id") + "/revoke", Map.of("reason", "chargeback"), true);
    Answers.Validation v = c.validate();
    Assert.check(!v.valid(), "not valid");
    Assert.equal("KEY_REVOKED", v.code());
    Assert.equal("INVALIDATED", c.check().reason);
  }

  @Test
  void startTrialKeepsTheTrialLikeAnActivationOncePerMachine() throws Exception {
    Map<String, Object> product = new LinkedHashMap<>();
    product.put("code", "JAVA_TRIAL");
    product.put("name", "Java trial product");
    product.put("key_prefix", "JTR");
    product.put("trial", Map.of("days", 14));
    call("POST", "/api/v1/admin/products", product, true);
    LicenseClient c = client("java-trial-1", "JAVA_TRIAL", null);
    License trial = c.startTrial(new LicenseClient.MachineInfo("till-07", null, "2.0.0"), null);
    Assert.equal("TRIAL", trial.licenseType());
    Assert.equal("JAVA_TRIAL", trial.product());
    CheckResult checked = c.check();
    Assert.check(checked.ok, "the trial is checked offline: " + checked);
    Assert.check(checked.expiresAt != null, "a trial expires");
    Assert.check(c.validate().valid(), "validated online");
    LicenseClient again = client("java-trial-1", "JAVA_TRIAL", null);
    Assert.equal("TRIAL_ALREADY_USED", Assert.raises(ServerError.class, () -> again.startTrial(null, null)).code());
    Assert.equal("NO_LICENSE", again.check().reason);
    LicenseClient noTrials = client("java-trial-2", "POS_RETAIL", null);
    Assert.equal("TRIALS_DISABLED", Assert.raises(ServerError.class, () -> noTrials.startTrial(null, null)).code());
  }

  @Test
  void checkForUpdateOffersTheNewestReleaseAndDownloadUpdateChecksTheBytes() throws Exception {
    byte[] data = ("java client update " + System.nanoTime() + "\n").repeat(2000).getBytes(StandardCharsets.UTF_8);
    Map<String, Object> release = call("POST", "/api/v1/admin/products/POS_RETAIL/releases", Map.of("version", "6.1.0", "notes", "Faster start"), true);
    Object id = Json.asLong(release.get("id"));
    HttpResponse<String> put = HTTP.send(HttpRequest.newBuilder(URI.create(server().url + "/api/v1/admin/releases/" + id + "/artifacts/app-6.1.0.tar.gz?platform=linux&arch=x64"))
        .header("x-api-key", server().apiKey).header("content-type", "application/octet-stream")
        .PUT(HttpRequest.BodyPublishers.ofByteArray(data)).build(), HttpResponse.BodyHandlers.ofString());
    Assert.equal(201, put.statusCode());
    call("POST", "/api/v1/admin/releases/" + id + "/publish", null, true);
    LicenseClient c = client("java-update-1", "POS_RETAIL", null);
    LicenseClient.UpdateQuery query = new LicenseClient.UpdateQuery("6.0.0");
    query.platform = "linux";
    query.arch = "x64";
    Assert.equal("NOT_ACTIVATED", Assert.raises(ServerError.class, () -> c.checkForUpdate(query)).code());
    c.activate(createLicense("POS_RETAIL"), null);
    Answers.Release offered = c.checkForUpdate(query).update();
    Assert.equal("6.1.0", offered.version());
    Assert.equal("Faster start", offered.notes());
    Answers.Artifact artifact = offered.artifacts().get(0);
    Assert.equal((long) data.length, artifact.size());
    Path folder = Files.createTempDirectory("licence-client-update-");
    Path saved = c.downloadUpdate(artifact, folder.resolve(artifact.filename()));
    Assert.check(java.util.Arrays.equals(data, Files.readAllBytes(saved)), "the downloaded bytes are the uploaded ones");
    Map<String, Object> tamperedRaw = new LinkedHashMap<>(artifact.raw());
    tamperedRaw.put("sha256", "0".repeat(64));
    Answers.Artifact tampered = new Answers.Artifact(tamperedRaw);
    Assert.refused("DIGEST_MISMATCH", () -> c.downloadUpdate(tampered, folder.resolve("tampered")));
    Assert.check(!Files.exists(folder.resolve("tampered")), "nothing is left at the target");
    query.currentVersion = "6.1.0";
    Assert.equal(null, c.checkForUpdate(query).update());
    query.currentVersion = "6.0.0";
    query.platform = "darwin";
    query.arch = "arm64";
    Assert.equal(null, c.checkForUpdate(query).update());
  }

  /** A stand-in server (another key, unendorsed) between the client and the real server is refused. */
  @Test
  void aStandInServerIsRefused() throws Exception {
    String key = createLicense("POS_RETAIL");
    TestKeys standIn = TestKeys.ed25519();
    HttpServer proxy = HttpServer.create(new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
    proxy.createContext("/", exchange -> {
      try {
        HttpRequest.Builder forward = HttpRequest.newBuilder(URI.create(server().url + exchange.getRequestURI()));
        byte[] body = exchange.getRequestBody().readAllBytes();
        forward.method(exchange.getRequestMethod(), body.length == 0 ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        forward.header("content-type", "application/json");
        HttpResponse<String> answer = HTTP.send(forward.build(), HttpResponse.BodyHandlers.ofString());
        Map<String, Object> parsed = Json.object(answer.body());
        if (parsed != null && exchange.getRequestURI().getPath().endsWith("/public-keys")) {
          List<Object> keys = new ArrayList<>();
          keys.add(standIn.published("active", List.of()));
          for (Object k : Json.asList(parsed.get("keys"))) {
            Map<String, Object> entry = new LinkedHashMap<>(Json.asObject(k));
            entry.put("status", "retired");
            keys.add(entry);
          }
          parsed.put("keys", keys);
        } else if (parsed != null && parsed.get("envelope") != null) {
          Map<String, Object> envelope = Json.asObject(parsed.get("envelope"));
          Map<String, Object> payload = Json.asObject(Json.parse(VerificationKey.b64urlDecode((String) envelope.get("payload"))));
          payload.put("key_id", standIn.id());
          parsed.put("envelope", standIn.envelope(payload));
          if (parsed.containsKey("license")) parsed.put("license", payload);
        }
        byte[] out = (parsed == null ? answer.body() : Json.write(parsed)).getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("content-type", "application/json");
        exchange.sendResponseHeaders(answer.statusCode(), out.length);
        try (OutputStream o = exchange.getResponseBody()) {
          o.write(out);
        }
      } catch (Exception e) {
        exchange.sendResponseHeaders(502, -1);
        exchange.close();
      }
    });
    proxy.start();
    try {
      LicenseClient c = client("java-standin-1", "POS_RETAIL", "http://127.0.0.1:" + proxy.getAddress().getPort());
      Assert.refused("UNKNOWN_KEY", () -> c.activate(key, null));
      Assert.equal("NO_LICENSE", c.check().reason);
    } finally {
      proxy.stop(0);
    }
  }

  /** RSA -> Ed25519 -> RSA on the server with only the first key shipped and default options: the client follows. */
  @Test
  void zzFollowsARotationWithDefaultOptions() throws Exception {
    String key = createLicense("POS_RETAIL");
    LicenseClient c = client("java-rotation-1", "POS_RETAIL", null);
    c.activate(key, null);
    call("POST", "/api/v1/admin/signing-keys/rotate", Map.of("algorithm", "Ed25519"), true);
    call("POST", "/api/v1/admin/signing-keys/rotate", Map.of("algorithm", "RSA-SHA256"), true);
    Thread.sleep(1500); // every instance picks up a rotation within about a second (docs/signing.md, The keyring)
    String active = (String) call("GET", "/api/v1/public-key", null, false).get("key_id");
    Answers.Validation v = c.validate();
    Assert.check(v.valid(), "validated after two rotations");
    Assert.equal(active, v.raw().get("key_id"));
    String second = createLicense("POS_RETAIL");
    Assert.check(c.deactivate() != null, "deactivated");
    Assert.equal(second, c.activate(second, null).licenseKey());
    Assert.check(c.check().ok, "the re-activation under the third key is checked offline");
  }

  /** Used by checkForUpdate's test: reads a stream whole. */
  static byte[] readAll(InputStream in) throws IOException {
    try (in) {
      return in.readAllBytes();
    }
  }
}
