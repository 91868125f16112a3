package example.licenceserver.client;

import example.licenceserver.client.LicenceException.NetworkError;
import example.licenceserver.client.LicenceException.ServerError;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;

/**
 * A seat leased from a relay on the customer's network, verified (docs/clients.md, Relay leases): the pool by the
 * vendor's keys, the lease by the pool's relay key. Keep it alive with {@link #heartbeat()} every
 * {@link #heartbeatIntervalMillis()} (or {@link #startHeartbeat}), give it back with {@link #release()}.
 */
public final class RelaySeat {
  private final LicenseClient client;
  private final String relayUrl;
  // Package-private so the tests can shorten a lease's interval.
  volatile Map<String, Object> lease;
  private volatile Map<String, Object> pool;
  private volatile String poolFile;

  RelaySeat(LicenseClient client, String relayUrl, Map<String, Object> answer, Relay.Verified verified) {
    this.client = client;
    this.relayUrl = relayUrl;
    this.poolFile = Json.asString(answer.get("pool_file"));
    this.lease = verified.lease;
    this.pool = verified.pool;
  }

  public String relayUrl() {
    return relayUrl;
  }

  /** The verified lease: lease_id, pool_id, machine_fingerprint, issued_at, expires_at, heartbeat_interval_seconds. */
  public Map<String, Object> lease() {
    return Collections.unmodifiableMap(lease);
  }

  /** The verified pool: pool_id, license (the vendor-signed licence), seats, relay_public_key, relay_key_id, expiry. */
  public Map<String, Object> pool() {
    return Collections.unmodifiableMap(pool);
  }

  public String leaseId() {
    return (String) lease.get("lease_id");
  }

  public Instant expiresAt() {
    return LicenseClient.parseTime((String) lease.get("expires_at"));
  }

  public long heartbeatIntervalMillis() {
    return ((BigDecimal) lease.get("heartbeat_interval_seconds")).multiply(BigDecimal.valueOf(1000)).longValue();
  }

  private String call(String path, boolean idempotent) throws LicenceException {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("machine_fingerprint", client.fingerprint());
    return client.request(relayUrl, "POST", path, body, idempotent);
  }

  /** Renews the lease; the answer is verified like the first. A ServerError NOT_ACTIVATED: the seat is gone. */
  public Map<String, Object> heartbeat() throws LicenceException {
    Map<String, Object> answer = Json.object(call("/relay/v1/leases/heartbeat", true));
    if (answer == null) throw new NetworkError("/relay/v1/leases/heartbeat: not a JSON object", null);
    answer = new LinkedHashMap<>(answer);
    answer.putIfAbsent("pool_file", poolFile);
    Relay.Verified verified = client.verifyRelayAnswer(Json.write(answer));
    poolFile = Json.asString(answer.get("pool_file"));
    pool = verified.pool;
    lease = verified.lease;
    return lease();
  }

  /** Gives the seat back to the pool (sent once: a repeat answers NOT_ACTIVATED); answers how many leases it released. */
  public long release() throws LicenceException {
    Map<String, Object> answer = Json.object(call("/relay/v1/leases/release", false));
    Long released = answer == null ? null : Json.asLong(answer.get("released"));
    if (released == null) throw new NetworkError("/relay/v1/leases/release: unexpected answer", null);
    return released;
  }

  /** A relay heartbeat loop in a daemon thread. */
  public final class HeartbeatLoop {
    private final Thread thread;
    private volatile boolean stopped;

    private HeartbeatLoop(Consumer<Map<String, Object>> onBeat, Consumer<LicenceException> onError, Consumer<ServerError> onLeaseLost) {
      thread = new Thread(() -> run(onBeat, onError, onLeaseLost), "licence-relay-heartbeat");
      thread.setDaemon(true);
      thread.start();
    }

    private void run(Consumer<Map<String, Object>> onBeat, Consumer<LicenceException> onError, Consumer<ServerError> onLeaseLost) {
      int failures = 0;
      while (!stopped) {
        long interval = heartbeatIntervalMillis();
        long wait = failures == 0 ? interval : Math.min((long) (1000 * Math.pow(2, failures)), interval);
        try {
          Thread.sleep((long) (wait * (0.9 + ThreadLocalRandom.current().nextDouble() * 0.2)));
        } catch (InterruptedException e) {
          return;
        }
        if (stopped) return;
        try {
          Map<String, Object> renewed = heartbeat();
          failures = 0;
          if (onBeat != null) onBeat.accept(renewed);
        } catch (ServerError e) {
          if (LicenseClient.seatGone(e.code())) {
            if (onLeaseLost != null) onLeaseLost.accept(e);
            return;
          }
          failures++;
          if (onError != null) onError.accept(e);
        } catch (LicenceException e) {
          failures++;
          if (onError != null) onError.accept(e);
        }
      }
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

    public boolean isAlive() {
      return thread.isAlive();
    }
  }

  /** Heartbeats every heartbeat_interval_seconds (±10 %), retrying failures sooner, until stopped or the seat is gone. */
  public HeartbeatLoop startHeartbeat(Consumer<Map<String, Object>> onBeat, Consumer<LicenceException> onError, Consumer<ServerError> onLeaseLost) {
    return new HeartbeatLoop(onBeat, onError, onLeaseLost);
  }
}
