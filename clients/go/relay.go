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

// verifyRelayLease checks a `POST /relay/v1/leases` answer, in this order: the pool file's armor, its envelope with
// the vendor keys `trusted`, the pool equal to the payload, the relay key's id, product, the pool's expiry; then the
// lease envelope with the pool's relay key only, the lease equal to its payload, its pool, this machine's
// fingerprint, the lease's expiry. A *VerificationError carries a stable reason (clients/conformance-format.md,
// relay_lease).
func verifyRelayLease(answer []byte, trusted map[string]*PublicKey, revoked map[string]bool, fingerprint, product string, now time.Time) (*RelayLease, *RelayPool, error) {
	var document relayAnswer
	if json.Unmarshal(answer, &document) != nil || document.PoolFile == nil {
		return nil, nil, verr("MALFORMED_ENVELOPE", "the relay answered no lease")
	}
	var file map[string]json.RawMessage
	raw := dearmor("RELAY POOL", *document.PoolFile)
	if raw == nil || json.Unmarshal(raw, &file) != nil || file["pool"] == nil || file["envelope"] == nil {
		return nil, nil, verr("MALFORMED_ENVELOPE", "not a relay pool file")
	}
	payload, err := openEnvelope(file["envelope"], trusted, revoked)
	if err != nil {
		return nil, nil, err
	}
	if !sameJSON(file["pool"], payload) {
		return nil, nil, verr("PAYLOAD_MISMATCH", "the pool differs from the vendor's signed payload")
	}
	var pool RelayPool
	var license struct {
		Product string `json:"product"`
	}
	var relayKey *PublicKey
	keyErr := errors.New("no pool")
	if json.Unmarshal(payload, &pool) == nil {
		relayKey, keyErr = ParsePublicKeyPEM(pool.RelayPublicKey)
	}
	expires := parseTime(pool.ExpiresAt)
	if keyErr != nil || relayKey.Algorithm != "Ed25519" || relayKey.KeyID != pool.RelayKeyID || pool.PoolID == "" ||
		json.Unmarshal(pool.License, &license) != nil || expires == nil {
		return nil, nil, verr("MALFORMED_PAYLOAD", "the pool lacks a relay Ed25519 key that matches relay_key_id")
	}
	if product != "" && license.Product != product {
		return nil, nil, verr("PRODUCT_MISMATCH", fmt.Sprintf("the pool lends %q, not %q", license.Product, product))
	}
	if !now.Before(*expires) {
		return nil, nil, verr("POOL_EXPIRED", "the pool expired at "+pool.ExpiresAt)
	}

	var named struct {
		KeyID *string `json:"key_id"`
	}
	if json.Unmarshal(document.Envelope, &named) == nil && named.KeyID != nil && *named.KeyID != relayKey.KeyID {
		return nil, nil, verr("INVALID_SIGNATURE", fmt.Sprintf("the lease is signed by key %s, not by the pool's relay key %s", *named.KeyID, relayKey.KeyID))
	}
	// The relay key is the only key a lease may carry: a vendor key, trusted for pools, signs no lease.
	signed, err := openEnvelope(document.Envelope, map[string]*PublicKey{relayKey.KeyID: relayKey}, nil)
	if err != nil {
		return nil, nil, err
	}
	if document.Lease == nil || !sameJSON(document.Lease, signed) {
		return nil, nil, verr("PAYLOAD_MISMATCH", "the lease differs from the relay's signed payload")
	}
	var lease RelayLease
	leaseExpires := (*time.Time)(nil)
	if json.Unmarshal(signed, &lease) == nil {
		leaseExpires = parseTime(lease.ExpiresAt)
	}
	if lease.LeaseID == "" || leaseExpires == nil || !(lease.HeartbeatIntervalSeconds > 0) || math.IsInf(lease.HeartbeatIntervalSeconds, 0) {
		return nil, nil, verr("MALFORMED_PAYLOAD", "the lease lacks lease_id, expires_at or heartbeat_interval_seconds")
	}
	if lease.PoolID != pool.PoolID {
		return nil, nil, verr("WRONG_SUBJECT", fmt.Sprintf("the lease is of pool %q, not %s", lease.PoolID, pool.PoolID))
	}
	if lease.MachineFingerprint != fingerprint {
		return nil, nil, verr("FINGERPRINT_MISMATCH", "the lease was made for another machine")
	}
	if !now.Before(*leaseExpires) {
		return nil, nil, verr("LEASE_EXPIRED", "the lease expired at "+lease.ExpiresAt)
	}
	return &lease, &pool, nil
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
// by any other key is a *VerificationError (INVALID_SIGNATURE, UNKNOWN_KEY, ...). Asking again from the same machine
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
