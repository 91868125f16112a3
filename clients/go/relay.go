package licenceclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"time"
)

// Leases from a relay on an offline network (docs/clients.md, Relay leases): the pool file is signed by the vendor,
// the lease by the relay's own Ed25519 key that the pool names. Nothing the relay says is trusted before both
// signatures check out.

// RelayPool is the pool a vendor signed for one relay: Seats of License, lent by the relay whose key is
// RelayPublicKey. Raw holds every member as signed.
type RelayPool struct {
	PoolID         string          `json:"pool_id"`
	License        json.RawMessage `json:"license"`
	Seats          int             `json:"seats"`
	RelayPublicKey string          `json:"relay_public_key"`
	RelayKeyID     string          `json:"relay_key_id"`
	IssuedAt       string          `json:"issued_at"`
	ExpiresAt      string          `json:"expires_at"`
}

// RelayLease is one machine's lease of a seat of the pool.
type RelayLease struct {
	LeaseID                  string  `json:"lease_id"`
	PoolID                   string  `json:"pool_id"`
	MachineFingerprint       string  `json:"machine_fingerprint"`
	IssuedAt                 string  `json:"issued_at"`
	ExpiresAt                string  `json:"expires_at"`
	HeartbeatIntervalSeconds float64 `json:"heartbeat_interval_seconds"`
}

type relayAnswer struct {
	Lease    json.RawMessage `json:"lease"`
	Envelope json.RawMessage `json:"envelope"`
	PoolFile *string         `json:"pool_file"`
}

func relayErr(reason, message string) *VerificationError { return verr(reason, message) }

// verifyRelayPool checks a pool file, in this order: the armor and its pool object (MALFORMED_POOL_FILE), the
// envelope with the vendor keys `trusted` (SIGNATURE_INVALID, whatever the envelope's own reason), the pool equal to
// the payload (POOL_MISMATCH), its members (MALFORMED_POOL_FILE), the relay key named by its key id
// (WRONG_RELAY_KEY), product (PRODUCT_MISMATCH), expiry (POOL_EXPIRED): the names of docs/test-vectors/relay.json.
func verifyRelayPool(poolFile string, trusted map[string]*PublicKey, revoked map[string]bool, product string, now time.Time) (*RelayPool, *PublicKey, error) {
	var file map[string]json.RawMessage
	var poolObject map[string]json.RawMessage
	raw := dearmor("RELAY POOL", poolFile)
	if raw == nil || json.Unmarshal(raw, &file) != nil || json.Unmarshal(file["pool"], &poolObject) != nil || poolObject == nil {
		return nil, nil, relayErr("MALFORMED_POOL_FILE", "not a relay pool file with a pool object")
	}
	payload, err := openEnvelope(file["envelope"], trusted, revoked)
	if err != nil {
		return nil, nil, relayErr("SIGNATURE_INVALID", "the pool's envelope is refused ("+err.Error()+")")
	}
	if !sameJSON(file["pool"], payload) {
		return nil, nil, relayErr("POOL_MISMATCH", "the pool is not exactly the envelope's signed payload")
	}
	var pool RelayPool
	var members struct {
		Seats   *float64 `json:"seats"`
		License *struct {
			Product            string  `json:"product"`
			MachineFingerprint *string `json:"machine_fingerprint"`
		} `json:"license"`
	}
	if json.Unmarshal(payload, &pool) != nil || json.Unmarshal(payload, &members) != nil || pool.PoolID == "" ||
		members.Seats == nil || members.License == nil || members.License.MachineFingerprint == nil || parseTime(pool.ExpiresAt) == nil {
		return nil, nil, relayErr("MALFORMED_POOL_FILE", "the signed pool lacks pool_id, seats, expires_at or license")
	}
	relayKey, keyErr := ParsePublicKeyPEM(pool.RelayPublicKey)
	if keyErr != nil || relayKey.Algorithm != "Ed25519" || relayKey.KeyID != pool.RelayKeyID {
		return nil, nil, relayErr("WRONG_RELAY_KEY", "the pool names a relay key whose key id is not relay_key_id")
	}
	if product != "" && members.License.Product != product {
		return nil, nil, relayErr("PRODUCT_MISMATCH", fmt.Sprintf("the pool lends %q, not %q", members.License.Product, product))
	}
	if !now.Before(*parseTime(pool.ExpiresAt)) {
		return nil, nil, relayErr("POOL_EXPIRED", "the pool expired at "+pool.ExpiresAt)
	}
	return &pool, relayKey, nil
}

// verifyRelayLease checks a `POST /relay/v1/leases` answer: the pool file (verifyRelayPool), then the lease envelope
// with the pool's relay key and no other (SIGNATURE_INVALID), the lease equal to its payload, of that pool and for
// this machine (LEASE_MISMATCH), not expired (LEASE_EXPIRED).
func verifyRelayLease(answer []byte, trusted map[string]*PublicKey, revoked map[string]bool, fingerprint, product string, now time.Time) (*RelayLease, *RelayPool, error) {
	var document relayAnswer
	if json.Unmarshal(answer, &document) != nil || document.PoolFile == nil {
		return nil, nil, relayErr("MALFORMED_POOL_FILE", "the relay answered no pool file")
	}
	pool, relayKey, err := verifyRelayPool(*document.PoolFile, trusted, revoked, product, now)
	if err != nil {
		return nil, nil, err
	}
	// The relay key is the only key a lease may carry: a vendor key, trusted for pools, signs no lease.
	signed, err := openEnvelope(document.Envelope, map[string]*PublicKey{relayKey.KeyID: relayKey}, nil)
	if err != nil {
		return nil, nil, relayErr("SIGNATURE_INVALID", "the lease's envelope is refused ("+err.Error()+")")
	}
	if document.Lease == nil || !sameJSON(document.Lease, signed) {
		return nil, nil, relayErr("LEASE_MISMATCH", "the lease is not exactly the envelope's signed payload")
	}
	var lease RelayLease
	var leaseExpires *time.Time
	if json.Unmarshal(signed, &lease) == nil {
		leaseExpires = parseTime(lease.ExpiresAt)
	}
	if lease.LeaseID == "" || leaseExpires == nil || !(lease.HeartbeatIntervalSeconds > 0) || math.IsInf(lease.HeartbeatIntervalSeconds, 0) {
		return nil, nil, relayErr("LEASE_MISMATCH", "the lease lacks lease_id, expires_at or heartbeat_interval_seconds")
	}
	if lease.PoolID != pool.PoolID || lease.MachineFingerprint != fingerprint {
		return nil, nil, relayErr("LEASE_MISMATCH", "the lease is for another pool or another machine")
	}
	if !now.Before(*leaseExpires) {
		return nil, nil, relayErr("LEASE_EXPIRED", "the lease expired at "+lease.ExpiresAt)
	}
	return &lease, pool, nil
}

// VerifyRelayAnswer verifies a relay's lease answer with the vendor keys this client trusts now (shipped, or endorsed
// by them, fetching the server's key list once for a key not yet known) and returns the lease and its pool.
func (c *Client) VerifyRelayAnswer(ctx context.Context, answer []byte) (*RelayLease, *RelayPool, error) {
	var document relayAnswer
	var envelope json.RawMessage
	if json.Unmarshal(answer, &document) == nil && document.PoolFile != nil {
		var file struct {
			Envelope json.RawMessage `json:"envelope"`
		}
		if raw := dearmor("RELAY POOL", *document.PoolFile); raw != nil && json.Unmarshal(raw, &file) == nil {
			envelope = file.Envelope
		}
	}
	state := c.stateFor(ctx, envelope)
	return c.verifyRelayAnswer(answer, state)
}

func (c *Client) verifyRelayAnswer(answer []byte, state *clientState) (*RelayLease, *RelayPool, error) {
	fingerprint, err := c.Fingerprint()
	if err != nil {
		return nil, nil, err
	}
	return verifyRelayLease(answer, c.trusted(state), revokedSet(state), fingerprint, c.opts.Product, c.opts.Now())
}

// RelaySeat is a seat leased from a relay, verified (docs/clients.md, Relay leases). Keep it alive with Heartbeat
// every Lease.HeartbeatIntervalSeconds (or StartHeartbeat) and give it back with Release. Not safe for concurrent use.
type RelaySeat struct {
	client   *Client
	RelayURL string
	Lease    *RelayLease
	Pool     *RelayPool
	poolFile string
}

// LeaseFromRelay leases a seat from a relay on the customer's network. The answer is verified first: the pool file
// with the vendor keys this client trusts, the pool equal to its signed payload, for this product and not expired;
// then the lease with the pool's relay key only, for this machine and not expired. A forged pool or a lease signed
// by any other key is a *VerificationError SIGNATURE_INVALID (the other reasons: docs/clients.md, Relay leases). Asking again from the same machine
// renews the same lease. hostname may be empty (then os.Hostname).
func (c *Client) LeaseFromRelay(ctx context.Context, relayURL, hostname string) (*RelaySeat, error) {
	fingerprint, err := c.Fingerprint()
	if err != nil {
		return nil, err
	}
	if hostname == "" {
		hostname, _ = os.Hostname()
	}
	body := map[string]interface{}{"machine_fingerprint": fingerprint}
	if hostname != "" {
		body["hostname"] = hostname
	}
	answer, err := c.requestAt(ctx, relayURL, "POST", "/relay/v1/leases", body, true)
	if err != nil {
		return nil, err
	}
	lease, pool, err := c.VerifyRelayAnswer(ctx, answer)
	if err != nil {
		return nil, err
	}
	var document relayAnswer
	_ = json.Unmarshal(answer, &document)
	return &RelaySeat{client: c, RelayURL: relayURL, Lease: lease, Pool: pool, poolFile: *document.PoolFile}, nil
}

func (s *RelaySeat) call(ctx context.Context, path string, idempotent bool) ([]byte, error) {
	fingerprint, err := s.client.Fingerprint()
	if err != nil {
		return nil, err
	}
	return s.client.requestAt(ctx, s.RelayURL, "POST", path, map[string]interface{}{"machine_fingerprint": fingerprint}, idempotent)
}

// Heartbeat renews the lease; the answer is verified like the first. A *ServerError NOT_ACTIVATED: the seat is gone.
func (s *RelaySeat) Heartbeat(ctx context.Context) (*RelayLease, error) {
	answer, err := s.call(ctx, "/relay/v1/leases/heartbeat", true)
	if err != nil {
		return nil, err
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(answer, &members) == nil && members != nil && members["pool_file"] == nil {
		members["pool_file"], _ = json.Marshal(s.poolFile)
		answer, _ = json.Marshal(members)
	}
	lease, pool, err := s.client.VerifyRelayAnswer(ctx, answer)
	if err != nil {
		return nil, err
	}
	var document relayAnswer
	_ = json.Unmarshal(answer, &document)
	s.Lease, s.Pool, s.poolFile = lease, pool, *document.PoolFile
	return lease, nil
}

// Release gives the seat back to the pool (sent once: a repeat answers NOT_ACTIVATED). It returns how many leases
// the relay released.
func (s *RelaySeat) Release(ctx context.Context) (int, error) {
	answer, err := s.call(ctx, "/relay/v1/leases/release", false)
	if err != nil {
		return 0, err
	}
	var released struct {
		Released int `json:"released"`
	}
	if err := json.Unmarshal(answer, &released); err != nil {
		return 0, &NetworkError{Message: "/relay/v1/leases/release: unexpected answer", Err: err}
	}
	return released.Released, nil
}

// RelayHeartbeatOptions: callbacks of a relay heartbeat loop.
type RelayHeartbeatOptions struct {
	OnBeat      func(*RelayLease)
	OnError     func(error)
	OnLeaseLost func(*ServerError)
}

// StartHeartbeat renews the lease every HeartbeatIntervalSeconds (±10 %), retrying failures sooner, until Stop or
// the relay answers NOT_ACTIVATED (after OnLeaseLost). The seat is the loop's while it runs.
func (s *RelaySeat) StartHeartbeat(options RelayHeartbeatOptions) *HeartbeatLoop {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		failures := 0
		for {
			interval := time.Duration(s.Lease.HeartbeatIntervalSeconds * float64(time.Second))
			wait := interval
			if failures > 0 {
				wait = time.Duration(math.Min(float64(time.Second)*math.Pow(2, float64(failures)), float64(interval)))
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(jitter(wait)):
			}
			lease, err := s.Heartbeat(ctx)
			if err != nil {
				var serverErr *ServerError
				if errors.As(err, &serverErr) && seatGone(serverErr.Code) {
					if options.OnLeaseLost != nil {
						options.OnLeaseLost(serverErr)
					}
					return
				}
				if ctx.Err() != nil {
					return
				}
				failures++
				if options.OnError != nil {
					options.OnError(err)
				}
				continue
			}
			failures = 0
			if options.OnBeat != nil {
				options.OnBeat(lease)
			}
		}
	}()
	return &HeartbeatLoop{cancel: cancel, Done: done}
}
