package example.licenceserver.client;

import example.licenceserver.client.LicenceException.NetworkError;
import example.licenceserver.client.LicenceException.ServerError;
import example.licenceserver.client.LicenceException.StateError;
import example.licenceserver.client.LicenceException.VerificationError;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * The licence server's client for Java: activation, trials, signed validation with a nonce, usage metering,
 * heartbeats, licence files, air-gapped activation, update checks and an offline {@link #check()}. Answers are accepted
 * only as signed envelopes, verified against the keys the application ships and the keys they endorse
 * (docs/clients.md). Safe for concurrent use.
 */
public final class LicenseClient {
  private static final Pattern FINGERPRINT = Pattern.compile("^sha256:[0-9a-f]{64}$");
  private static final Pattern BASE64 = Pattern.compile("^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$");
  private static final Set<Integer> RETRYABLE = Set.of(429, 502, 503, 504);
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
  private static final SecureRandom RANDOM = new SecureRandom();

  private final Options options;
  private final StateFile store;
  private final Object lock = new Object();
  private String fingerprint;

  /** The client's settings; {@code serverUrl}, {@code statePath}, {@code appSalt} and {@code publicKeys} are required. */
  public static final class Options {
    String serverUrl;
    Path statePath;
    String appSalt;
    final List<VerificationKey> publicKeys = new ArrayList<>();
    final List<VerificationKey> rootKeys = new ArrayList<>();
    String product;
    String fingerprint;
    Supplier<String> fingerprintSupplier;
    boolean pinToShippedKeys;
    Duration clockTolerance = Duration.ofSeconds(300);
    int maxOfflineDays;
    Duration keyRefreshInterval = Duration.ofHours(1);
    Duration timeout = Duration.ofSeconds(10);
    int retries = 2;
    Supplier<Instant> clock = Instant::now;
    HttpClient httpClient;

    /** Base URL; a path is kept (https://vendor.example/licensing/). */
    public Options serverUrl(String url) { this.serverUrl = url; return this; }
    /** The one state file, written atomically. */
    public Options statePath(Path path) { this.statePath = path; return this; }
    /** A secret of the application: salts the default fingerprint and keys the state file's HMAC. */
    public Options appSalt(String salt) { this.appSalt = salt; return this; }
    /** The keys shipped with the application ({@link #parseKeyList} reads a /public-keys answer or a JWK Set). */
    public Options publicKeys(List<VerificationKey> keys) { this.publicKeys.addAll(keys); return this; }
    /** Offline root keys: they endorse signing keys and sign nothing else. */
    public Options rootKeys(List<VerificationKey> keys) { this.rootKeys.addAll(keys); return this; }
    /** The application's product code: sent on activation, required by check() and startTrial(). */
    public Options product(String code) { this.product = code; return this; }
    /** Replaces the default fingerprint (SHA-256 of the OS machine id and appSalt). */
    public Options fingerprint(String value) { this.fingerprint = value; return this; }
    public Options fingerprint(Supplier<String> supplier) { this.fingerprintSupplier = supplier; return this; }
    /**
     * Trust only the shipped keys: a rotation then needs an application update. By default the client follows
     * endorsed rotations (keys endorsed by a trusted key that is not revoked), as every official client does.
     */
    public Options pinToShippedKeys(boolean pin) { this.pinToShippedKeys = pin; return this; }
    /** How far the local clock may be behind the latest signed server time (default 300 s). */
    public Options clockTolerance(Duration tolerance) { this.clockTolerance = tolerance; return this; }
    /** Refuse offline use after this many days without a signed answer (0: no limit). */
    public Options maxOfflineDays(int days) { this.maxOfflineDays = days; return this; }
    /** Online calls fetch the key list first when the stored one is older (default 1 h). */
    public Options keyRefreshInterval(Duration interval) { this.keyRefreshInterval = interval; return this; }
    /** Per request (default 10 s). */
    public Options timeout(Duration timeout) { this.timeout = timeout; return this; }
    /** Retries of safe requests (default 2). */
    public Options retries(int retries) { this.retries = Math.max(0, retries); return this; }
    /** For tests and simulations. */
    public Options clock(Supplier<Instant> clock) { this.clock = clock; return this; }
    public Options httpClient(HttpClient client) { this.httpClient = client; return this; }
  }

  /** What activation and trials send about this machine; null members take the OS's values. */
  public static final class MachineInfo {
    public String hostname;
    public String os;
    public String appVersion;

    public MachineInfo() {}

    public MachineInfo(String hostname, String os, String appVersion) {
      this.hostname = hostname;
      this.os = os;
      this.appVersion = appVersion;
    }
  }

  /** Where and what the application runs, for {@link #checkForUpdate}. */
  public static final class UpdateQuery {
    /** The running version (SemVer). */
    public String currentVersion;
    /** stable (default), beta or alpha: a channel also offers the more stable ones. */
    public String channel;
    /** Node's names: linux, darwin, win32 (default: this JVM's OS). */
    public String platform;
    /** x64 or arm64 (default: this JVM's architecture). */
    public String arch;

    public UpdateQuery(String currentVersion) {
      this.currentVersion = currentVersion;
    }
  }

  public LicenseClient(Options options) {
    if (options.appSalt == null || options.appSalt.isEmpty()) throw new IllegalArgumentException("appSalt is required");
    if (options.statePath == null) throw new IllegalArgumentException("statePath is required");
    if (options.serverUrl == null) throw new IllegalArgumentException("serverUrl is required");
    if (options.publicKeys.isEmpty()) {
      throw new IllegalArgumentException("publicKeys is required: ship the server's public key(s) with the application");
    }
    if (options.httpClient == null) options.httpClient = HttpClient.newBuilder().connectTimeout(options.timeout).build();
    this.options = options;
    this.store = new StateFile(options.statePath, options.appSalt);
    try {
      store.prepare();
    } catch (StateError e) {
      // Raised again, as a StateError, by the first call, before it goes online (docs/clients.md, The state file).
    }
  }

  /** Reads shipped keys from a /public-keys answer or a JWK Set ({@code {"keys": [...]}}). */
  public static List<VerificationKey> parseKeyList(String json) throws GeneralSecurityException {
    Map<String, Object> list = Json.object(json);
    if (list == null || !(list.get("keys") instanceof List)) throw new GeneralSecurityException("not a key list");
    List<VerificationKey> keys = new ArrayList<>();
    for (Object entry : Json.asList(list.get("keys"))) keys.add(VerificationKey.fromEntry(Json.asObject(entry)));
    return keys;
  }

  // ---- the machine -----------------------------------------------------------------------------------------------

  /** This machine's fingerprint: the option, or SHA-256 of the OS machine id and the salt. */
  public String fingerprint() {
    synchronized (lock) {
      if (fingerprint != null) return fingerprint;
      String value = options.fingerprint;
      if (options.fingerprintSupplier != null) value = options.fingerprintSupplier.get();
      if (value == null || value.isEmpty()) value = defaultFingerprint(options.appSalt, machineId());
      if (!FINGERPRINT.matcher(value).matches()) {
        throw new IllegalArgumentException("a fingerprint is \"sha256:\" followed by 64 lower-case hex digits");
      }
      fingerprint = value;
      return value;
    }
  }

  /** The OS's stable id of this installation (/etc/machine-id on Linux); the host name otherwise. */
  public static String machineId() {
    for (String path : new String[] {"/etc/machine-id", "/var/lib/dbus/machine-id"}) {
      try {
        String id = Files.readString(Path.of(path)).trim();
        if (!id.isEmpty()) return id;
      } catch (IOException | RuntimeException e) {
        // next
      }
    }
    return "hostname:" + hostname();
  }

  /** SHA-256 of the machine id and the application salt: the raw id never leaves the machine. */
  public static String defaultFingerprint(String appSalt, String machineId) {
    return "sha256:" + HexFormat.of().formatHex(sha("SHA-256", (appSalt + "\0" + machineId).getBytes(StandardCharsets.UTF_8)));
  }

  // ---- online calls ----------------------------------------------------------------------------------------------

  /** Binds this machine's seat, verifies and stores the licence, and returns it. */
  public License activate(String licenseKey, MachineInfo machine) throws LicenceException {
    Map<String, Object> body = machineBody(machine);
    body.put("license_key", licenseKey);
    if (options.product != null) body.put("product", options.product);
    refreshKeysIfDue();
    return storeActivation(request("POST", "/api/v1/activate", body, true));
  }

  /**
   * Starts the product's self-service trial on this machine (docs/client-api.md, Trials): the signed trial licence is
   * then stored and checked like an activation. One trial per product and machine, ever: a second answers
   * TRIAL_ALREADY_USED; a product without trials TRIALS_DISABLED.
   */
  public License startTrial(MachineInfo machine, String customerEmail) throws LicenceException {
    if (options.product == null) throw new IllegalStateException("startTrial needs the product option");
    Map<String, Object> body = machineBody(machine);
    body.put("product", options.product);
    if (customerEmail != null) body.put("customer_email", customerEmail);
    refreshKeysIfDue();
    // Not retried: a lost answer after the server started the trial would answer TRIAL_ALREADY_USED on a retry.
    return storeActivation(request("POST", "/api/v1/trials", body, false));
  }

  /** Frees the seat (never retried: limits count it) and clears the stored licence. */
  public Answers.Deactivation deactivate() throws LicenceException {
    Answers.Deactivation answer = new Answers.Deactivation(parsed(request("POST", "/api/v1/deactivate", seatBody(), false)));
    update(s -> {
      for (String m : new String[] {"activation", "license_file", "last_validation", "seat_seen_at", "seat_lost"}) s.remove(m);
    });
    return answer;
  }

  /** Checks online with a fresh nonce; the signed answer is verified and remembered for {@link #check()}. */
  public Answers.Validation validate() throws LicenceException {
    refreshKeysIfDue();
    Map<String, Object> body = seatBody();
    String nonce = randomToken();
    body.put("nonce", nonce);
    body.put("envelope", true);
    Map<String, Object> payload = verifyAnswer(request("POST", "/api/v1/validate", body, true), nonce, (String) body.get("license_key"));
    Answers.Validation answer = new Answers.Validation(payload);
    update(s -> {
      Map<String, Object> last = new LinkedHashMap<>();
      last.put("valid", answer.valid());
      last.put("status", answer.status());
      last.put("code", answer.code());
      last.put("checked_at", answer.checkedAt());
      s.put("last_validation", last);
      later(s, "latest_signed_at", parseTime(answer.checkedAt()));
    });
    return answer;
  }

  /** Counts uses of a metered licence; one idempotency key per call (generated when null), so a retry counts once. */
  public Answers.Usage usage(long increment, String idempotencyKey) throws LicenceException {
    refreshKeysIfDue();
    Map<String, Object> body = seatBody();
    String nonce = randomToken();
    body.put("increment", increment <= 0 ? 1 : increment);
    body.put("idempotency_key", idempotencyKey == null ? randomToken() : idempotencyKey);
    body.put("nonce", nonce);
    body.put("envelope", true);
    Answers.Usage answer = new Answers.Usage(verifyAnswer(request("POST", "/api/v1/usage", body, true), nonce, (String) body.get("license_key")));
    update(s -> later(s, "latest_signed_at", parseTime(answer.checkedAt())));
    return answer;
  }

  /** Sends one heartbeat: a success is the seat's last sign of life; NOT_ACTIVATED marks the seat lost. */
  public Answers.Heartbeat heartbeat() throws LicenceException {
    Map<String, Object> body = seatBody();
    Instant sentAt = options.clock.get();
    String raw;
    try {
      raw = request("POST", "/api/v1/heartbeat", body, true);
    } catch (ServerError e) {
      if (seatGone(e.code())) {
        update(s -> {
          Map<String, Object> lost = new LinkedHashMap<>();
          lost.put("code", e.code());
          lost.put("at", formatTime(options.clock.get()));
          s.put("seat_lost", lost);
        });
      }
      throw e;
    }
    Answers.Heartbeat answer = new Answers.Heartbeat(parsed(raw));
    if (answer.valid()) update(s -> later(s, "seat_seen_at", sentAt));
    return answer;
  }

  /** A heartbeat loop: a third of the licence's timeout apart with ±10 % jitter, backing off after failures. */
  public final class HeartbeatLoop {
    private final Thread thread;
    private volatile boolean stopped;

    private HeartbeatLoop(Consumer<Answers.Heartbeat> onBeat, Consumer<LicenceException> onError, Consumer<ServerError> onSeatLost, Duration fallback) {
      thread = new Thread(() -> run(onBeat, onError, onSeatLost, fallback), "licence-heartbeat");
      thread.setDaemon(true);
      thread.start();
    }

    private void run(Consumer<Answers.Heartbeat> onBeat, Consumer<LicenceException> onError, Consumer<ServerError> onSeatLost, Duration fallback) {
      int failures = 0;
      Instant deadline = null;
      long waitMs = 0;
      while (!stopped) {
        try {
          Thread.sleep(waitMs);
        } catch (InterruptedException e) {
          return;
        }
        if (stopped) return;
        try {
          Answers.Heartbeat answer = heartbeat();
          failures = 0;
          if (onBeat != null) onBeat.accept(answer);
          Long timeout = answer.heartbeatTimeoutSeconds();
          long intervalMs = timeout != null ? timeout * 1000 / 3 : fallback.toMillis();
          Instant next = parseTime(answer.nextHeartbeatBefore());
          if (next != null) deadline = next;
          waitMs = jitter(intervalMs);
        } catch (ServerError e) {
          if (seatGone(e.code())) {
            if (onSeatLost != null) onSeatLost.accept(e);
            return;
          }
          if (onError != null) onError.accept(e);
          waitMs = backoff(++failures, deadline);
        } catch (LicenceException e) {
          if (onError != null) onError.accept(e);
          waitMs = backoff(++failures, deadline);
        }
      }
    }

    private long backoff(int failures, Instant deadline) {
      double seconds = Math.min(Math.pow(2, failures), 300);
      if (deadline != null) seconds = Math.min(seconds, Math.max(Duration.between(Instant.now(), deadline).toMillis() / 1000.0 - 1, 2) / 2);
      return jitter((long) (seconds * 1000));
    }

    /** Ends the loop. */
    public void stop() {
      stopped = true;
      thread.interrupt();
    }

    /** Waits until the loop has ended. */
    public void join() throws InterruptedException {
      thread.join();
    }
  }

  /** Starts a heartbeat loop; {@code fallback} is the interval when the licence has no timeout (15 minutes when null). */
  public HeartbeatLoop startHeartbeat(Consumer<Answers.Heartbeat> onBeat, Consumer<LicenceException> onError, Consumer<ServerError> onSeatLost, Duration fallback) {
    return new HeartbeatLoop(onBeat, onError, onSeatLost, fallback == null ? Duration.ofMinutes(15) : fallback);
  }

  // ---- relay leases (docs/clients.md, Relay leases) ---------------------------------------------------------------

  /**
   * Leases a seat from a relay on the customer's network. The answer is verified first: the pool file with the vendor
   * keys this client trusts (shipped, or endorsed by them), the pool equal to its signed payload, for this product and
   * not expired; then the lease with the pool's relay key only, for this machine and not expired. A forged pool or a
   * lease signed by any other key is a VerificationError SIGNATURE_INVALID (the other reasons: docs/clients.md, Relay
   * leases). Asking again from the
   * same machine renews the same lease. {@code hostname} may be null (then this machine's name).
   */
  public RelaySeat leaseFromRelay(String relayUrl, String hostname) throws LicenceException {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("machine_fingerprint", fingerprint());
    body.put("hostname", hostname != null ? hostname : hostname());
    String answer = request(relayUrl, "POST", "/relay/v1/leases", body, true);
    return new RelaySeat(this, relayUrl, Json.object(answer), verifyRelayAnswer(answer));
  }

  /** Verifies a relay's lease answer with the vendor keys trusted now; answers {lease, pool}. */
  Relay.Verified verifyRelayAnswer(String answer) throws VerificationError {
    Map<String, Object> document = Json.object(answer);
    String armored = document == null ? null : dearmor(Relay.POOL_LABEL, Json.asString(document.get("pool_file")));
    Map<String, Object> file = armored == null ? null : Json.object(armored);
    return verifyRelayAnswer(answer, stateFor(file == null ? null : file.get("envelope")));
  }

  Map<String, Object> verifyRelayPool(String poolFile, Map<String, Object> state) throws VerificationError {
    return Relay.verifyPool(poolFile, trusted(state), revokedSet(state), options.product, options.clock.get()).pool;
  }

  Relay.Verified verifyRelayAnswer(String answer, Map<String, Object> state) throws VerificationError {
    return Relay.verify(Json.object(answer), trusted(state), revokedSet(state), fingerprint(), options.product, options.clock.get());
  }

  /** Fetches, verifies and stores a licence file for offline use. */
  public Answers.LicenseFile licenseFile() throws LicenceException {
    refreshKeysIfDue();
    Map<String, Object> body = seatBody();
    body.put("envelope", true);
    Answers.LicenseFile answer = new Answers.LicenseFile(parsed(request("POST", "/api/v1/license-file", body, true)));
    storeLicenseFile(answer.licenseFile());
    return answer;
  }

  /**
   * Asks for an update (docs/releases.md): the newest release above {@code currentVersion} this licence may download,
   * on the channel or a more stable one, with an artifact for the platform; verified like a validate answer (nonce,
   * licence, machine). {@code update()} is null when there is none.
   */
  public Answers.UpdateCheck checkForUpdate(UpdateQuery query) throws LicenceException {
    refreshKeysIfDue();
    Map<String, Object> body = seatBody();
    String nonce = randomToken();
    if (options.product != null) body.put("product", options.product);
    if (query.channel != null) body.put("channel", query.channel);
    body.put("platform", query.platform != null ? query.platform : platform());
    body.put("arch", query.arch != null ? query.arch : arch());
    body.put("current_version", query.currentVersion);
    body.put("nonce", nonce);
    body.put("envelope", true);
    Map<String, Object> payload = verifyAnswer(request("POST", "/api/v1/releases/check", body, true), nonce, (String) body.get("license_key"));
    Answers.UpdateCheck answer = new Answers.UpdateCheck(payload);
    update(s -> later(s, "latest_signed_at", parseTime(answer.checkedAt())));
    return answer;
  }

  /**
   * Downloads an artifact of a verified update to {@code target} and checks its size, SHA-256 and SHA-512 against the
   * signed answer; on a mismatch the file is removed and DIGEST_MISMATCH raised.
   */
  public Path downloadUpdate(Answers.Artifact artifact, Path target) throws LicenceException {
    Path temporary = null;
    try {
      HttpRequest request = HttpRequest.newBuilder(new URI(artifact.url())).timeout(Duration.ofHours(1)).GET().build();
      HttpResponse<InputStream> response = options.httpClient.send(request, HttpResponse.BodyHandlers.ofInputStream());
      if (response.statusCode() != 200) {
        response.body().close();
        throw new NetworkError("download " + artifact.filename() + ": answer " + response.statusCode(), null);
      }
      Path folder = target.toAbsolutePath().getParent();
      temporary = Files.createTempFile(folder, ".download-", ".part");
      MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
      MessageDigest sha512 = MessageDigest.getInstance("SHA-512");
      long size = 0;
      try (InputStream in = response.body(); OutputStream out = Files.newOutputStream(temporary)) {
        byte[] buffer = new byte[64 * 1024];
        for (int n; (n = in.read(buffer)) > 0; ) {
          sha256.update(buffer, 0, n);
          sha512.update(buffer, 0, n);
          out.write(buffer, 0, n);
          size += n;
        }
      }
      HexFormat hex = HexFormat.of();
      Long expected = artifact.size();
      if ((expected != null && expected != size) || !hex.formatHex(sha256.digest()).equals(artifact.sha256()) || !hex.formatHex(sha512.digest()).equals(artifact.sha512())) {
        throw new VerificationError("DIGEST_MISMATCH", "the downloaded " + artifact.filename() + " is not the signed release's file");
      }
      Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      temporary = null;
      return target;
    } catch (IOException | URISyntaxException | IllegalArgumentException e) {
      throw new NetworkError("download " + artifact.filename() + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new NetworkError("download interrupted", e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    } finally {
      if (temporary != null) {
        try {
          Files.deleteIfExists(temporary);
        } catch (IOException ignored) {
          // best effort
        }
      }
    }
  }

  /** The text an air-gapped machine hands to staff (dashboard or admin API). */
  public String createActivationRequest(String licenseKey, MachineInfo machine) {
    Map<String, Object> body = machineBody(machine);
    body.put("license_key", licenseKey);
    if (options.product != null) body.put("product", options.product);
    return armor("ACTIVATION REQUEST", Json.write(body).getBytes(StandardCharsets.UTF_8));
  }

  /** Verifies and stores a licence file (e.g. the answer to an activation request), then checks it. */
  public CheckResult importLicenseFile(String text) throws LicenceException {
    storeLicenseFile(text);
    return check();
  }

  /** Fetches /api/v1/public-keys: endorsed keys become trusted, revoked ones are dropped for good. Answers the trusted ids. */
  public Set<String> refreshKeys() throws LicenceException {
    Map<String, Object> list = parsed(request("GET", "/api/v1/public-keys", null, true));
    List<Object> keys = Json.asList(list.get("keys"));
    if (keys.isEmpty()) throw new VerificationError("NO_KEYS", "the server published no public key");
    learnKeys(keys);
    return new TreeSet<>(trusted(store.load().state).keySet());
  }

  /** Stores a published key list (replacing the last one) and remembers every key it lists as revoked. */
  public void learnKeys(List<Object> entries) throws LicenceException {
    Set<String> revoked = Trust.revoked(entries);
    update(s -> {
      s.put("server_keys", new ArrayList<>(entries));
      Set<String> ids = new TreeSet<>();
      for (Object id : Json.asList(s.get("revoked_key_ids"))) if (id instanceof String) ids.add((String) id);
      ids.addAll(revoked);
      s.put("revoked_key_ids", new ArrayList<>(ids));
      s.put("server_keys_fetched_at", formatTime(options.clock.get()));
    });
  }

  // ---- offline ---------------------------------------------------------------------------------------------------

  /** The offline decision from the stored state; it never goes online and never throws. */
  public CheckResult check() {
    StateFile.Loaded loaded = store.load();
    if (loaded.kind == StateFile.Kind.CORRUPT) return CheckResult.refuse("STATE_CORRUPT", "the state file is unreadable; activate again", null);
    if (loaded.kind == StateFile.Kind.TAMPERED) return CheckResult.refuse("STATE_TAMPERED", "the state file was changed outside the client", null);
    Map<String, Object> state = loaded.state;
    String machine;
    try {
      machine = fingerprint();
    } catch (RuntimeException e) {
      return CheckResult.refuse("FINGERPRINT_MISMATCH", e.getMessage(), null);
    }
    Instant now = options.clock.get();
    String source;
    License license;
    try {
      Stored stored = storedLicense(state);
      if (stored == null) return CheckResult.refuse("NO_LICENSE", "no licence is stored on this machine", null);
      source = stored.source;
      license = stored.license;
    } catch (VerificationError e) {
      return CheckResult.refuse(e.reason(), e.getMessage(), null);
    }
    if (!license.machineFingerprint().equals(machine)) return CheckResult.refuse("FINGERPRINT_MISMATCH", "the licence was issued to another machine", license);
    if (options.product != null && !options.product.equals(license.product())) {
      return CheckResult.refuse("PRODUCT_MISMATCH", "the licence is for product " + license.product(), license);
    }
    Instant latest = max(signedTimeOf(license), parseTime(Json.asString(state.get("latest_signed_at"))));
    if (latest != null && now.isBefore(latest.minus(options.clockTolerance))) {
      return CheckResult.refuse("CLOCK_TAMPERED", "the local clock is earlier than a time the server signed (" + formatTime(latest) + ")", license);
    }
    Map<String, Object> last = Json.asObject(state.get("last_validation"));
    if (last != null && !Boolean.TRUE.equals(last.get("valid"))) {
      Instant checked = parseTime(Json.asString(last.get("checked_at")));
      Instant signed = signedTimeOf(license);
      if (checked != null && (signed == null || !checked.isBefore(signed))) {
        String code = Json.asString(last.get("code")) != null ? Json.asString(last.get("code")) : Json.asString(last.get("status"));
        return CheckResult.refuse("INVALIDATED", "the server answered " + code + " at " + last.get("checked_at"), license);
      }
    }
    Long timeout = license.heartbeatTimeoutSeconds();
    if (timeout != null) {
      Instant seen = max(parseTime(Json.asString(state.get("seat_seen_at"))), parseTime(license.activatedAt()));
      Map<String, Object> lost = Json.asObject(state.get("seat_lost"));
      if (lost != null) {
        Instant at = parseTime(Json.asString(lost.get("at")));
        if (at != null && (seen == null || !at.isBefore(seen))) {
          return CheckResult.refuse("SEAT_LOST", "the server answered " + lost.get("code") + " to a heartbeat: the seat was released", license);
        }
      }
      if (seen == null || Duration.between(seen, now).compareTo(Duration.ofSeconds(timeout)) > 0) {
        return CheckResult.refuse("HEARTBEAT_OVERDUE", "no successful heartbeat for more than " + timeout + " s", license);
      }
    }
    Instant fileExpiresAt = parseTime(license.fileExpiresAt());
    if (source.equals("license_file") && (fileExpiresAt == null || now.isAfter(fileExpiresAt))) {
      return CheckResult.refuse("FILE_EXPIRED", "the licence file expired at " + license.fileExpiresAt() + "; fetch a new one", license);
    }
    if (options.maxOfflineDays > 0 && (latest == null || Duration.between(latest, now).compareTo(Duration.ofDays(options.maxOfflineDays)) > 0)) {
      return CheckResult.refuse("OFFLINE_TOO_LONG", "no signed answer for more than " + options.maxOfflineDays + " days", license);
    }
    String status = "active";
    Instant expires = null;
    Instant graceEnds = null;
    if (license.expiresAt() != null) {
      expires = parseTime(license.expiresAt());
      if (expires == null) return CheckResult.refuse("MALFORMED_PAYLOAD", "expires_at is not a time", license);
      graceEnds = expires.plus(Duration.ofDays(license.graceDays()));
      if (now.isAfter(graceEnds)) return CheckResult.refuse("EXPIRED", "the licence expired at " + license.expiresAt(), license);
      if (now.isAfter(expires)) status = "grace";
    }
    return new CheckResult(true, null, null, status, license, source, expires, graceEnds, fileExpiresAt);
  }

  // ---- verification ----------------------------------------------------------------------------------------------

  private Map<String, VerificationKey> trusted(Map<String, Object> state) {
    Set<String> revoked = revokedSet(state);
    if (options.pinToShippedKeys) return Trust.trustedKeys(options.publicKeys, List.of(), List.of(), revoked);
    return Trust.trustedKeys(options.publicKeys, options.rootKeys, Trust.published(Json.asList(state.get("server_keys"))), revoked);
  }

  private static Set<String> revokedSet(Map<String, Object> state) {
    Set<String> revoked = new LinkedHashSet<>();
    for (Object id : Json.asList(state.get("revoked_key_ids"))) if (id instanceof String) revoked.add((String) id);
    return revoked;
  }

  byte[] open(Object envelope, Map<String, Object> state) throws VerificationError {
    return Trust.openEnvelope(envelope, trusted(state), revokedSet(state));
  }

  /** {@code {license?, signature?, envelope}}: the licence is the payload, and {@code license} must equal it. */
  private License openSignedLicense(Map<String, Object> document, Map<String, Object> state) throws VerificationError {
    if (document == null) throw new VerificationError("MALFORMED_ENVELOPE", "not a signed licence");
    if (!document.containsKey("envelope")) {
      throw new VerificationError("UNSUPPORTED_FORMAT", "no envelope: a version 1 licence, which this client does not accept");
    }
    Map<String, Object> payload = Json.asObject(Json.parse(open(document.get("envelope"), state)));
    if (document.containsKey("license") && !Json.sameValue(document.get("license"), payload)) {
      throw new VerificationError("PAYLOAD_MISMATCH", "the licence beside the envelope differs from the signed payload");
    }
    License license = License.parse(payload);
    if (license == null) throw new VerificationError("MALFORMED_PAYLOAD", "the payload is not a licence");
    return license;
  }

  License openLicenseFile(String text, Map<String, Object> state) throws VerificationError {
    String document = dearmor("LICENSE FILE", text);
    if (document == null) throw new VerificationError("MALFORMED_ENVELOPE", "not a licence file");
    return openSignedLicense(Json.object(document), state);
  }

  /** The state after fetching the server's keys once, when the envelope names a key not yet trusted. */
  private Map<String, Object> stateFor(Object envelope) {
    Map<String, Object> state = store.load().state;
    Map<String, Object> named = Json.asObject(envelope);
    String keyId = named == null ? null : Json.asString(named.get("key_id"));
    if (keyId != null && !trusted(state).containsKey(keyId) && !revokedSet(state).contains(keyId)) {
      try {
        refreshKeys();
        state = store.load().state;
      } catch (LicenceException e) {
        // offline: decide with what is stored
      }
    }
    return state;
  }

  /**
   * Checks a signed answer (validate, usage, update check): its envelope verifies, it echoes the nonce and names this
   * licence and machine. Answers the payload.
   */
  public Map<String, Object> verifyAnswer(String answer, String nonce, String licenseKey) throws VerificationError {
    Map<String, Object> document = Json.object(answer);
    if (document == null) throw new VerificationError("MALFORMED_ENVELOPE", "the answer is not a JSON object");
    if (!document.containsKey("envelope")) throw new VerificationError("UNSUPPORTED_FORMAT", "the answer carries no envelope");
    Map<String, Object> payload = Json.asObject(Json.parse(open(document.get("envelope"), stateFor(document.get("envelope")))));
    if (!nonce.equals(payload.get("nonce"))) throw new VerificationError("NONCE_MISMATCH", "the answer is not for this request (replayed?)");
    if (!licenseKey.equals(payload.get("license_key")) || !fingerprint().equals(payload.get("machine_fingerprint"))) {
      throw new VerificationError("WRONG_SUBJECT", "the answer is about another licence or machine");
    }
    return payload;
  }

  /** Verifies an activation (or trial) answer and stores it: what {@link #activate} does with the server's answer. */
  public License storeActivation(String answer) throws LicenceException {
    Map<String, Object> document = Json.object(answer);
    if (document == null) throw new VerificationError("MALFORMED_ENVELOPE", "the activation answer is not a JSON object");
    if (!document.containsKey("envelope")) throw new VerificationError("UNSUPPORTED_FORMAT", "the activation answer carries no envelope");
    License license = openSignedLicense(document, stateFor(document.get("envelope")));
    Map<String, Object> stored = new LinkedHashMap<>();
    stored.put("envelope", document.get("envelope"));
    Instant now = options.clock.get();
    update(s -> {
      s.put("activation", stored);
      s.remove("license_file");
      s.remove("last_validation");
      s.remove("seat_lost");
      s.put("seat_seen_at", formatTime(now));
      later(s, "latest_signed_at", signedTimeOf(license));
    });
    return license;
  }

  private void storeLicenseFile(String text) throws LicenceException {
    String document = dearmor("LICENSE FILE", text);
    if (document == null) throw new VerificationError("MALFORMED_ENVELOPE", "not a licence file");
    Map<String, Object> members = Json.object(document);
    Map<String, Object> state = members != null && members.containsKey("envelope") ? stateFor(members.get("envelope")) : store.load().state;
    License license = openSignedLicense(members, state);
    if (!license.machineFingerprint().equals(fingerprint())) {
      throw new VerificationError("FINGERPRINT_MISMATCH", "the licence file was issued to another machine");
    }
    update(s -> {
      s.put("license_file", text);
      s.remove("last_validation");
      later(s, "latest_signed_at", signedTimeOf(license));
    });
  }

  // ---- plumbing --------------------------------------------------------------------------------------------------

  private static final class Stored {
    final String source;
    final License license;

    Stored(String source, License license) {
      this.source = source;
      this.license = license;
    }
  }

  /** The stored licence file, else the stored activation, verified; null when neither is stored. */
  private Stored storedLicense(Map<String, Object> state) throws VerificationError {
    if (state.get("license_file") instanceof String) return new Stored("license_file", openLicenseFile((String) state.get("license_file"), state));
    if (state.get("activation") != null) return new Stored("activation", openSignedLicense(Json.asObject(state.get("activation")), state));
    return null;
  }

  private void refreshKeysIfDue() {
    Instant fetched = parseTime(Json.asString(store.load().state.get("server_keys_fetched_at")));
    Instant now = options.clock.get();
    if (fetched != null && !now.isBefore(fetched) && now.isBefore(fetched.plus(options.keyRefreshInterval))) return;
    try {
      refreshKeys();
    } catch (LicenceException e) {
      // a failed refresh keeps the stored key list
    }
  }

  private Map<String, Object> seatBody() throws ServerError {
    Stored stored;
    try {
      stored = storedLicense(store.load().state);
    } catch (VerificationError e) {
      stored = null;
    }
    if (stored == null) throw new ServerError("NOT_ACTIVATED", 400, "this machine has no stored licence; activate first", null);
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("license_key", stored.license.licenseKey());
    body.put("machine_fingerprint", fingerprint());
    return body;
  }

  private Map<String, Object> machineBody(MachineInfo machine) {
    MachineInfo info = machine == null ? new MachineInfo() : machine;
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("machine_fingerprint", fingerprint());
    body.put("hostname", info.hostname != null ? info.hostname : hostname());
    body.put("os", info.os != null ? info.os : System.getProperty("os.name") + " " + System.getProperty("os.arch"));
    if (info.appVersion != null) body.put("app_version", info.appVersion);
    // envelope: true asks for the signed envelope (docs/signing.md, Envelopes): this client verifies nothing else.
    body.put("envelope", true);
    return body;
  }

  private interface Change {
    void apply(Map<String, Object> state);
  }

  private void update(Change change) throws StateError {
    synchronized (lock) {
      StateFile.Loaded loaded = store.load();
      Map<String, Object> state = loaded.kind == StateFile.Kind.OK ? new LinkedHashMap<>(loaded.state) : StateFile.empty();
      change.apply(state);
      try {
        store.save(state);
      } catch (IOException e) {
        throw new StateError(options.statePath, "cannot write the state file " + options.statePath + ": " + e.getMessage(), e);
      }
    }
  }

  private URI endpoint(String baseUrl, String path) throws NetworkError {
    try {
      URI base = new URI(baseUrl);
      String basePath = base.getRawPath() == null || base.getRawPath().isEmpty() ? "/" : base.getRawPath();
      if (!basePath.endsWith("/")) basePath += "/";
      return new URI(base.getScheme(), base.getRawAuthority(), null, null, null).resolve(basePath + path.replaceFirst("^/+", ""));
    } catch (URISyntaxException | IllegalArgumentException e) {
      throw new NetworkError("base URL " + baseUrl + ": " + e.getMessage(), e);
    }
  }

  private String request(String method, String path, Map<String, Object> body, boolean idempotent) throws LicenceException {
    return request(options.serverUrl, method, path, body, idempotent);
  }

  /**
   * A call to the server, or to a relay at {@code baseUrl}. The state file's folder is made sure of first: a call whose
   * answer the client cannot store is not sent (a StateError, never a NetworkError).
   */
  String request(String baseUrl, String method, String path, Map<String, Object> body, boolean idempotent) throws LicenceException {
    store.prepare();
    int attempts = 1 + (idempotent ? options.retries : 0);
    for (int attempt = 1; ; attempt++) {
      try {
        return requestOnce(baseUrl, method, path, body);
      } catch (NetworkError | ServerError e) {
        boolean retryable = e instanceof NetworkError || RETRYABLE.contains(((ServerError) e).status());
        if (!retryable || attempt >= attempts) throw e;
        double pause = 0.5 * (1 << (attempt - 1));
        if (e instanceof ServerError && ((ServerError) e).details().get("retry_after_seconds") instanceof BigDecimal) {
          pause = Math.min(((BigDecimal) ((ServerError) e).details().get("retry_after_seconds")).doubleValue(), 30);
        }
        try {
          Thread.sleep((long) (pause * 1000 * (0.8 + ThreadLocalRandom.current().nextDouble() * 0.4)));
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw e;
        }
      }
    }
  }

  private String requestOnce(String baseUrl, String method, String path, Map<String, Object> body) throws LicenceException {
    HttpRequest.Builder builder = HttpRequest.newBuilder(endpoint(baseUrl, path)).timeout(options.timeout).header("accept", "application/json");
    if (body != null) {
      builder.header("content-type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(Json.write(body)));
    } else {
      builder.method(method, HttpRequest.BodyPublishers.noBody());
    }
    HttpResponse<InputStream> response;
    String text;
    try {
      response = options.httpClient.send(builder.build(), HttpResponse.BodyHandlers.ofInputStream());
      try (InputStream in = response.body()) {
        byte[] raw = in.readNBytes(4 << 20);
        text = Json.utf8(raw);
      }
      Json.parse(text);
    } catch (IOException | IllegalArgumentException e) {
      throw new NetworkError(method + " " + path + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new NetworkError(method + " " + path + ": interrupted", e);
    }
    int status = response.statusCode();
    if (status >= 200 && status < 300) return text;
    Map<String, Object> failure = Json.asObject(Json.object(text) == null ? null : Json.object(text).get("error"));
    String code = failure == null ? null : Json.asString(failure.get("code"));
    if (code == null || code.isEmpty()) throw new NetworkError(method + " " + path + ": answer " + status + " without an error body", null);
    Map<String, Object> details = Json.asObject(failure.get("details"));
    details = details == null ? new LinkedHashMap<>() : new LinkedHashMap<>(details);
    String retryAfter = response.headers().firstValue("retry-after").orElse(null);
    if (retryAfter != null && !details.containsKey("retry_after_seconds")) {
      try {
        details.put("retry_after_seconds", new BigDecimal(retryAfter.trim()));
      } catch (NumberFormatException e) {
        // an HTTP date: ignored
      }
    }
    throw new ServerError(code, status, String.valueOf(failure.get("message")), details);
  }

  private static Map<String, Object> parsed(String text) throws NetworkError {
    Map<String, Object> object = Json.object(text);
    if (object == null) throw new NetworkError("unexpected answer: not a JSON object", null);
    return object;
  }

  // ---- small helpers ---------------------------------------------------------------------------------------------

  static boolean seatGone(String code) {
    return "NOT_ACTIVATED".equals(code) || "INVALID_KEY".equals(code);
  }

  static String armor(String label, byte[] raw) {
    String text = Base64.getEncoder().encodeToString(raw);
    StringBuilder out = new StringBuilder("-----BEGIN " + label + "-----\n");
    for (int i = 0; i < text.length(); i += 64) out.append(text, i, Math.min(text.length(), i + 64)).append('\n');
    return out.append("-----END ").append(label).append("-----\n").toString();
  }

  /** The JSON inside an armor, or null when any part is wrong. */
  static String dearmor(String label, String text) {
    if (text == null || text.length() > 256 * 1024) return null;
    List<String> lines = new ArrayList<>();
    for (String line : text.replaceFirst("^\uFEFF", "").split("\n", -1)) {
      String trimmed = line.strip();
      if (!trimmed.isEmpty()) lines.add(trimmed);
    }
    if (lines.size() < 3 || !lines.get(0).equals("-----BEGIN " + label + "-----") || !lines.get(lines.size() - 1).equals("-----END " + label + "-----")) return null;
    String body = String.join("", lines.subList(1, lines.size() - 1));
    if (!BASE64.matcher(body).matches()) return null;
    try {
      String json = Json.utf8(Base64.getDecoder().decode(body));
      Json.parse(json);
      return json;
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private static String randomToken() {
    byte[] raw = new byte[24];
    RANDOM.nextBytes(raw);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
  }

  private static long jitter(long ms) {
    return (long) (ms * (0.9 + ThreadLocalRandom.current().nextDouble() * 0.2));
  }

  static Instant parseTime(String text) {
    if (text == null || text.isEmpty()) return null;
    try {
      return OffsetDateTime.parse(text).toInstant();
    } catch (DateTimeParseException e) {
      return null;
    }
  }

  static String formatTime(Instant t) {
    return TIME.format(t);
  }

  private static Instant max(Instant a, Instant b) {
    if (a == null) return b;
    if (b == null) return a;
    return a.isAfter(b) ? a : b;
  }

  private static void later(Map<String, Object> state, String member, Instant candidate) {
    Instant best = max(parseTime(Json.asString(state.get(member))), candidate);
    if (best != null) state.put(member, formatTime(best));
  }

  static Instant signedTimeOf(License license) {
    return max(max(parseTime(license.signedAt()), parseTime(license.fileIssuedAt())), parseTime(license.activatedAt()));
  }

  private static byte[] sha(String algorithm, byte[] data) {
    try {
      return MessageDigest.getInstance(algorithm).digest(data);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String hostname() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      String env = System.getenv("HOSTNAME");
      return env != null ? env : "unknown";
    }
  }

  /** This JVM's OS in Node's names (linux, darwin, win32), as releases name platforms. */
  static String platform() {
    String os = System.getProperty("os.name", "").toLowerCase();
    if (os.contains("win")) return "win32";
    if (os.contains("mac") || os.contains("darwin")) return "darwin";
    return "linux";
  }

  /** This JVM's architecture in Node's names (x64, arm64). */
  static String arch() {
    String arch = System.getProperty("os.arch", "").toLowerCase();
    if (arch.equals("aarch64") || arch.equals("arm64")) return "arm64";
    if (arch.equals("amd64") || arch.equals("x86_64")) return "x64";
    return arch;
  }
}
