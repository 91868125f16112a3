package licenceclient

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// startRealRelay starts a real relay (the repository's build) lending a pool the vendor server issued, through
// clients/relay-for-tests.mjs; forged: the pool re-signed by a key of the relay's own.
func startRealRelay(t *testing.T, s *testServer, licenseKey string, forged bool) (string, string) {
	t.Helper()
	args := []string{filepath.Join("..", "relay-for-tests.mjs"), "--server", s.url, "--api-key", s.apiKey, "--license", licenseKey, "--seats", "2"}
	if forged {
		args = append(args, "--forged")
	}
	command := exec.Command("node", args...)
	stdin, _ := command.StdinPipe()
	stdout, _ := command.StdoutPipe()
	if err := command.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = command.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = command.Process.Kill()
		}
	})
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	var started struct {
		URL    string `json:"url"`
		PoolID string `json:"pool_id"`
	}
	if err != nil || json.Unmarshal(line, &started) != nil {
		t.Fatalf("relay-for-tests: %v %s", err, line)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return started.URL, started.PoolID
}

func TestRelayOnline(t *testing.T) {
	s := realServer(t)
	ctx := context.Background()

	t.Run("a pool the vendor server issued verifies; a copy with more seats does not", func(t *testing.T) {
		key := s.createLicense(t, map[string]interface{}{"limits": map[string]int{"max_installations": 5}})["license_key"].(string)
		public, _, _ := ed25519.GenerateKey(rand.Reader)
		der, _ := x509.MarshalPKIXPublicKey(public)
		request := armor("RELAY POOL REQUEST", mustJSON(map[string]interface{}{
			"license_key": key, "relay_fingerprint": fingerprintOf("relay-go-machine"), "seats": 3,
			"relay_public_key": string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})),
		}))
		issued := s.admin(t, "POST", "/relay-pools", map[string]string{"request": request})
		client := onlineClient(t, s, "relay-go-pool", nil)
		_, state := client.store.load()
		pool, _, err := verifyRelayPool(issued["pool_file"].(string), client.trusted(state), nil, "POS_RETAIL", time.Now())
		if err != nil || pool.PoolID != issued["pool_id"] || pool.Seats != 3 {
			t.Fatalf("pool %+v: %v", pool, err)
		}
		var document map[string]map[string]interface{}
		_ = json.Unmarshal(dearmor("RELAY POOL", issued["pool_file"].(string)), &document)
		document["pool"]["seats"] = 300
		if _, _, err := verifyRelayPool(armor("RELAY POOL", mustJSON(document)), client.trusted(state), nil, "", time.Now()); codeOf(err) != "POOL_MISMATCH" {
			t.Fatalf("a pool with more seats: %v", err)
		}
	})

	t.Run("leases a seat per machine, renews it, refuses one more than the pool holds, takes a released seat back", func(t *testing.T) {
		key := s.createLicense(t, map[string]interface{}{"limits": map[string]int{"max_installations": 5}})["license_key"].(string)
		relayURL, poolID := startRealRelay(t, s, key, false)
		first, err := onlineClient(t, s, "relay-go-1", nil).LeaseFromRelay(ctx, relayURL, "bench-1")
		if err != nil || first.Pool.PoolID != poolID || first.Lease.MachineFingerprint != fingerprintOf("relay-go-1") {
			t.Fatalf("first lease: %+v %v", first, err)
		}
		again, err := onlineClient(t, s, "relay-go-1", nil).LeaseFromRelay(ctx, relayURL, "")
		if err != nil || again.Lease.LeaseID != first.Lease.LeaseID {
			t.Fatalf("the same machine again: %+v %v", again, err)
		}
		if lease, err := first.Heartbeat(ctx); err != nil || lease.LeaseID != first.Lease.LeaseID {
			t.Fatalf("heartbeat: %v", err)
		}
		if _, err := onlineClient(t, s, "relay-go-2", nil).LeaseFromRelay(ctx, relayURL, ""); err != nil {
			t.Fatal(err)
		}
		var serverErr *ServerError
		if _, err := onlineClient(t, s, "relay-go-3", nil).LeaseFromRelay(ctx, relayURL, ""); !errors.As(err, &serverErr) || serverErr.Code != "ACTIVATION_LIMIT_REACHED" {
			t.Fatalf("one more than the pool: %v", err)
		}
		if released, err := first.Release(ctx); err != nil || released != 1 {
			t.Fatalf("release: %d %v", released, err)
		}
		if _, err := first.Heartbeat(ctx); !errors.As(err, &serverErr) || serverErr.Code != "NOT_ACTIVATED" {
			t.Fatalf("heartbeat after release: %v", err)
		}
		if third, err := onlineClient(t, s, "relay-go-3", nil).LeaseFromRelay(ctx, relayURL, ""); err != nil || third.Pool.PoolID != poolID {
			t.Fatalf("the released seat: %v", err)
		}
	})

	t.Run("refuses a relay whose pool another key signed", func(t *testing.T) {
		key := s.createLicense(t, map[string]interface{}{"limits": map[string]int{"max_installations": 5}})["license_key"].(string)
		relayURL, _ := startRealRelay(t, s, key, true)
		if _, err := onlineClient(t, s, "relay-go-9", nil).LeaseFromRelay(ctx, relayURL, ""); codeOf(err) != "SIGNATURE_INVALID" {
			t.Fatalf("a forged pool: %v", err)
		}
	})
}
