package licenceclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Against a real server: this repository's build on a database the test creates (server_test.go).

func onlineClient(t *testing.T, s *testServer, seed string, mutate func(*Options)) *Client {
	t.Helper()
	var shipped struct {
		PublicKeyPEM string `json:"public_key_pem"`
	}
	key := s.call(t, "GET", "/api/v1/public-key", nil, false)
	shipped.PublicKeyPEM = key["public_key_pem"].(string)
	pinned, err := ParsePublicKeyPEM(shipped.PublicKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{
		ServerURL: s.url, StatePath: filepath.Join(t.TempDir(), "licence-state.json"), AppSalt: "online-test",
		PublicKeys: []*PublicKey{pinned}, Fingerprint: fingerprintOf(seed), Product: "POS_RETAIL", Retries: 1,
		Timeout: 5 * time.Second, HTTPClient: &http.Client{},
	}
	return newTestClient(t, opts, mutate)
}

// Online tests share one server and run in this order; the rotation test runs last because it changes the key.
func TestOnline(t *testing.T) {
	s := realServer(t)
	ctx := context.Background()

	t.Run("the server sends envelopes when asked; answers without one are refused", func(t *testing.T) {
		key := s.createLicense(t, nil)["license_key"].(string)
		plainKey := s.createLicense(t, nil)["license_key"].(string)
		plain := s.call(t, "POST", "/api/v1/activate", map[string]string{"license_key": plainKey, "machine_fingerprint": fingerprintOf("plain-0"), "hostname": "till-00", "os": "linux"}, false)
		if _, present := plain["envelope"]; present || plain["license"] == nil {
			t.Fatal("a client that does not ask gets today's answer")
		}
		client := onlineClient(t, s, "plain-1", func(o *Options) { o.HTTPClient = &http.Client{Transport: envelopeLessTransport} })
		if _, err := client.Activate(ctx, key, MachineInfo{}); codeOf(err) != "UNSUPPORTED_FORMAT" {
			t.Fatalf("activate: %v", err)
		}
		if r := client.Check(); r.Reason != "NO_LICENSE" {
			t.Fatalf("check: %+v", r)
		}
	})

	t.Run("activate, validate, check, licence file, heartbeat, deactivate", func(t *testing.T) {
		key := s.createLicense(t, nil)["license_key"].(string)
		client := onlineClient(t, s, "flow-1", nil)
		license, err := client.Activate(ctx, key, MachineInfo{Hostname: "till-01", AppVersion: "1.0.0"})
		if err != nil || license.LicenseKey != key || license.SignedAt == "" || license.Raw["license_key"] != key {
			t.Fatalf("activate: %v %+v", err, license)
		}
		answer, err := client.Validate(ctx)
		if err != nil || !answer.Valid || answer.Code != nil || answer.KeyID != license.KeyID {
			t.Fatalf("validate: %v %+v", err, answer)
		}
		if r := client.Check(); !r.OK || r.Source != "activation" || r.Status != "active" {
			t.Fatalf("check: %+v", r)
		}
		file, err := client.LicenseFile(ctx)
		if err != nil || file.FileExpiresAt == "" {
			t.Fatalf("licence file: %v", err)
		}
		if r := client.Check(); !r.OK || r.Source != "license_file" || r.FileExpiresAt == nil {
			t.Fatalf("check file: %+v", r)
		}
		if beat, err := client.Heartbeat(ctx); err != nil || !beat.Valid {
			t.Fatalf("heartbeat: %v %+v", err, beat)
		}
		result, err := client.Deactivate(ctx)
		if err != nil || !result.CanReactivate {
			t.Fatalf("deactivate: %v %+v", err, result)
		}
		if r := client.Check(); r.Reason != "NO_LICENSE" {
			t.Fatalf("after deactivate: %+v", r)
		}
	})

	t.Run("StartTrial keeps the trial like an activation, once per product and machine", func(t *testing.T) {
		s.admin(t, "POST", "/products", map[string]interface{}{"code": "GO_TRIAL", "name": "Go trial product", "key_prefix": "GTR", "trial": map[string]int{"days": 14}})
		product := func(code string) func(*Options) { return func(o *Options) { o.Product = code } }
		client := onlineClient(t, s, "trial-1", product("GO_TRIAL"))
		trial, err := client.StartTrial(ctx, MachineInfo{Hostname: "till-07", AppVersion: "2.0.0"}, "")
		if err != nil || trial.LicenseType != "TRIAL" || trial.Product != "GO_TRIAL" {
			t.Fatalf("start trial: %v %+v", err, trial)
		}
		if r := client.Check(); !r.OK || r.Source != "activation" || r.ExpiresAt == nil {
			t.Fatalf("check: %+v", r)
		}
		if answer, err := client.Validate(ctx); err != nil || !answer.Valid {
			t.Fatalf("validate: %v %+v", err, answer)
		}
		again := onlineClient(t, s, "trial-1", product("GO_TRIAL"))
		if _, err := again.StartTrial(ctx, MachineInfo{}, ""); codeOf(err) != "TRIAL_ALREADY_USED" {
			t.Fatalf("second trial: %v", err)
		}
		if r := again.Check(); r.Reason != "NO_LICENSE" {
			t.Fatalf("check after a refused trial: %+v", r)
		}
		if _, err := onlineClient(t, s, "trial-2", nil).StartTrial(ctx, MachineInfo{}, ""); codeOf(err) != "TRIALS_DISABLED" {
			t.Fatalf("no trials: %v", err)
		}
		if _, err := onlineClient(t, s, "trial-3", product("")).StartTrial(ctx, MachineInfo{}, ""); err == nil {
			t.Fatal("a trial without a product")
		}
	})

	t.Run("CheckForUpdate offers the newest release; DownloadUpdate checks the bytes", func(t *testing.T) {
		data := bytes.Repeat([]byte(fmt.Sprintf("go client update %d\n", time.Now().UnixNano())), 2000)
		release := s.admin(t, "POST", "/products/POS_RETAIL/releases", map[string]string{"version": "9.1.0", "notes": "Faster start"})
		id := jsonNumber(release["id"])
		request, _ := http.NewRequest("PUT", s.url+"/api/v1/admin/releases/"+id+"/artifacts/app-9.1.0.tar.gz?platform=linux&arch=x64", bytes.NewReader(data))
		request.Header.Set("x-api-key", s.apiKey)
		request.Header.Set("content-type", "application/octet-stream")
		response, err := http.DefaultClient.Do(request)
		if err != nil || response.StatusCode != 201 {
			t.Fatalf("upload: %v %v", err, response)
		}
		response.Body.Close()
		s.admin(t, "POST", "/releases/"+id+"/publish", nil)
		client := onlineClient(t, s, "update-1", nil)
		if _, err := client.CheckForUpdate(ctx, UpdateQuery{CurrentVersion: "9.0.0"}); codeOf(err) != "NOT_ACTIVATED" {
			t.Fatalf("not activated: %v", err)
		}
		if _, err := client.Activate(ctx, s.createLicense(t, nil)["license_key"].(string), MachineInfo{}); err != nil {
			t.Fatal(err)
		}
		answer, err := client.CheckForUpdate(ctx, UpdateQuery{CurrentVersion: "9.0.0", Platform: "linux", Arch: "x64"})
		if err != nil || answer.Update == nil || answer.Update.Version != "9.1.0" || answer.Update.Notes != "Faster start" || len(answer.Update.Artifacts) != 1 {
			t.Fatalf("check: %v %+v", err, answer)
		}
		artifact := answer.Update.Artifacts[0]
		folder := t.TempDir()
		if err := client.DownloadUpdate(ctx, artifact, filepath.Join(folder, artifact.Filename)); err != nil {
			t.Fatal(err)
		}
		if saved, _ := os.ReadFile(filepath.Join(folder, artifact.Filename)); !bytes.Equal(saved, data) {
			t.Fatal("the downloaded file is not the uploaded one")
		}
		tampered := artifact
		tampered.SHA256 = strings.Repeat("0", 64)
		if err := client.DownloadUpdate(ctx, tampered, filepath.Join(folder, "tampered")); codeOf(err) != "DIGEST_MISMATCH" {
			t.Fatalf("tampered digest: %v", err)
		}
		if _, err := os.Stat(filepath.Join(folder, "tampered")); !os.IsNotExist(err) {
			t.Fatal("a file was left at the target")
		}
		for _, q := range []UpdateQuery{{CurrentVersion: "9.1.0", Platform: "linux", Arch: "x64"}, {CurrentVersion: "9.0.0", Platform: "darwin", Arch: "arm64"}} {
			if answer, err := client.CheckForUpdate(ctx, q); err != nil || answer.Update != nil {
				t.Fatalf("no update for %+v: %v %+v", q, err, answer)
			}
		}
	})

	t.Run("server error codes arrive typed", func(t *testing.T) {
		_, err := onlineClient(t, s, "errors-1", nil).Activate(ctx, "POS-AAAAA-AAAAA-AAAAA-AAAAA", MachineInfo{})
		var serverErr *ServerError
		if !errors.As(err, &serverErr) || serverErr.Code != "INVALID_KEY" || serverErr.Status != 400 {
			t.Fatalf("invalid key: %v", err)
		}
		key := s.createLicense(t, nil)["license_key"].(string)
		if _, err := onlineClient(t, s, "errors-2", nil).Activate(ctx, key, MachineInfo{}); err != nil {
			t.Fatal(err)
		}
		_, err = onlineClient(t, s, "errors-3", nil).Activate(ctx, key, MachineInfo{})
		if !errors.As(err, &serverErr) || serverErr.Code != "ALREADY_ACTIVATED" || serverErr.Details["activated_on"] == nil {
			t.Fatalf("already activated: %v", err)
		}
	})

	t.Run("an unreachable server is a network error", func(t *testing.T) {
		client := onlineClient(t, s, "network-1", func(o *Options) { o.ServerURL, o.Retries, o.Timeout = "http://127.0.0.1:9", -1, 2*time.Second })
		var networkErr *NetworkError
		if _, err := client.Activate(ctx, "POS-AAAAA-AAAAA-AAAAA-AAAAA", MachineInfo{}); !errors.As(err, &networkErr) {
			t.Fatalf("network: %v", err)
		}
	})

	t.Run("a revocation seen online makes check refuse", func(t *testing.T) {
		created := s.createLicense(t, nil)
		client := onlineClient(t, s, "revoke-1", nil)
		if _, err := client.Activate(ctx, created["license_key"].(string), MachineInfo{}); err != nil {
			t.Fatal(err)
		}
		s.admin(t, "POST", "/licenses/"+jsonNumber(created["id"])+"/revoke", map[string]string{"reason": "chargeback"})
		answer, err := client.Validate(ctx)
		if err != nil || answer.Valid || answer.Code == nil || *answer.Code != "KEY_REVOKED" {
			t.Fatalf("validate: %v %+v", err, answer)
		}
		if r := client.Check(); r.Reason != "INVALIDATED" {
			t.Fatalf("check: %+v", r)
		}
	})

	t.Run("usage counts once per idempotency key and stops at the limit", func(t *testing.T) {
		key := s.createLicense(t, map[string]interface{}{"policy": map[string]interface{}{"max_uses": 3, "uses_period": "month"}})["license_key"].(string)
		client := onlineClient(t, s, "usage-1", nil)
		if _, err := client.Activate(ctx, key, MachineInfo{}); err != nil {
			t.Fatal(err)
		}
		first, err := client.Usage(ctx, UsageOptions{Increment: 2, IdempotencyKey: "retry-key-0001"})
		if err != nil || *first.Uses != 2 || *first.MaxUses != 3 || *first.Remaining != 1 {
			t.Fatalf("usage: %v %+v", err, first)
		}
		again, err := client.Usage(ctx, UsageOptions{Increment: 2, IdempotencyKey: "retry-key-0001"})
		if err != nil || *again.Uses != 2 {
			t.Fatalf("the same idempotency key counts once: %v %+v", err, again)
		}
		_, err = client.Usage(ctx, UsageOptions{Increment: 2})
		var serverErr *ServerError
		if !errors.As(err, &serverErr) || serverErr.Code != "USAGE_LIMIT_REACHED" || serverErr.Status != 403 || serverErr.Details["remaining"] != float64(1) {
			t.Fatalf("limit: %v", err)
		}
	})

	t.Run("air-gapped activation", func(t *testing.T) {
		key := s.createLicense(t, nil)["license_key"].(string)
		client := onlineClient(t, s, "airgap-1", nil)
		request, err := client.CreateActivationRequest(key, MachineInfo{Hostname: "vault-01"})
		if err != nil || !strings.HasPrefix(request, "-----BEGIN ACTIVATION REQUEST-----\n") {
			t.Fatalf("request: %v %q", err, request)
		}
		answer := s.admin(t, "POST", "/offline-activations", map[string]string{"request": request})
		if !isV2(answer["license_file"].(string)) {
			t.Fatal("the request asked for a version 2 file")
		}
		result, err := client.ImportLicenseFile(answer["license_file"].(string))
		if err != nil || !result.OK || result.Source != "license_file" {
			t.Fatalf("v2: %v %+v", err, result)
		}
		if _, err := onlineClient(t, s, "airgap-other", nil).ImportLicenseFile(answer["license_file"].(string)); codeOf(err) != "FINGERPRINT_MISMATCH" {
			t.Fatalf("other machine: %v", err)
		}
		// A request without `envelope` gets a version 1 file, which this client refuses.
		var old map[string]interface{}
		_ = json.Unmarshal(dearmor("ACTIVATION REQUEST", request), &old)
		old["envelope"], old["license_key"] = false, s.createLicense(t, nil)["license_key"]
		v1 := s.admin(t, "POST", "/offline-activations", map[string]string{"request": armor("ACTIVATION REQUEST", mustJSON(old))})
		if isV2(v1["license_file"].(string)) {
			t.Fatal("a request without envelope got a version 2 file")
		}
		if _, err := client.ImportLicenseFile(v1["license_file"].(string)); codeOf(err) != "UNSUPPORTED_FORMAT" {
			t.Fatalf("version 1 file: %v", err)
		}
	})

	t.Run("the heartbeat loop beats; a released seat is lost", func(t *testing.T) {
		created := s.createLicense(t, map[string]interface{}{"policy": map[string]interface{}{"heartbeat_timeout_seconds": 30}})
		client := onlineClient(t, s, "loop-1", nil)
		if _, err := client.Activate(ctx, created["license_key"].(string), MachineInfo{}); err != nil {
			t.Fatal(err)
		}
		var once sync.Once
		beat := make(chan *HeartbeatAnswer, 1)
		loop := client.StartHeartbeat(HeartbeatLoopOptions{OnBeat: func(a *HeartbeatAnswer) { once.Do(func() { beat <- a }) }})
		select {
		case answer := <-beat:
			if answer.HeartbeatTimeoutSeconds == nil || *answer.HeartbeatTimeoutSeconds != 30 || answer.NextHeartbeatBefore == nil {
				t.Fatalf("beat: %+v", answer)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no heartbeat")
		}
		loop.Stop()
		<-loop.Done
		s.admin(t, "POST", "/licenses/"+jsonNumber(created["id"])+"/release", map[string]string{})
		if _, err := client.Heartbeat(ctx); codeOf(err) != "NOT_ACTIVATED" {
			t.Fatalf("heartbeat after release: %v", err)
		}
		if r := client.Check(); r.Reason != "SEAT_LOST" {
			t.Fatalf("check: %+v", r)
		}
	})

	t.Run("a stand-in server's key is refused", func(t *testing.T) {
		client := onlineClient(t, s, "stand-in-1", func(o *Options) { o.HTTPClient = &http.Client{Transport: standInTransport(t)} })
		if _, err := client.Activate(ctx, s.createLicense(t, nil)["license_key"].(string), MachineInfo{}); codeOf(err) != "UNKNOWN_KEY" {
			t.Fatalf("stand-in: %v", err)
		}
		if r := client.Check(); r.Reason != "NO_LICENSE" {
			t.Fatalf("check: %+v", r)
		}
	})

	// Runs last: it changes the server's active key, through the admin API, twice.
	t.Run("rotations RSA -> Ed25519 -> RSA with only the first key shipped", func(t *testing.T) {
		key := s.createLicense(t, nil)["license_key"].(string)
		client := onlineClient(t, s, "rotate-1", nil)
		first, err := client.Activate(ctx, key, MachineInfo{})
		if err != nil {
			t.Fatal(err)
		}
		for _, algorithm := range []string{"Ed25519", "RSA-SHA256"} {
			rotated := s.admin(t, "POST", "/signing-keys/rotate", map[string]string{"algorithm": algorithm})
			if rotated["key_id"] == first.KeyID {
				t.Fatal("the rotation kept the key")
			}
			deadline := time.Now().Add(15 * time.Second)
			for {
				answer, err := client.Validate(ctx)
				if err != nil {
					t.Fatalf("validate after rotating to %s: %v", algorithm, err)
				}
				if answer.KeyID == rotated["key_id"] {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the server never signed with the rotated key")
				}
				time.Sleep(300 * time.Millisecond)
			}
			if r := client.Check(); !r.OK {
				t.Fatalf("check after rotating to %s: %+v", algorithm, r)
			}
			// A new installation that shipped only the first key activates and fetches a file signed by the new key.
			fresh := onlineClient(t, s, "rotate-"+algorithm, nil)
			license, err := fresh.Activate(ctx, s.createLicense(t, nil)["license_key"].(string), MachineInfo{})
			if err != nil || license.KeyID != rotated["key_id"] {
				t.Fatalf("fresh activation after rotating to %s: %v", algorithm, err)
			}
			file, err := fresh.LicenseFile(ctx)
			if err != nil {
				t.Fatalf("licence file after rotating to %s: %v", algorithm, err)
			}
			var document struct {
				Envelope struct {
					Alg string `json:"alg"`
				} `json:"envelope"`
			}
			_ = json.Unmarshal(dearmor("LICENSE FILE", file.LicenseFile), &document)
			if want := map[string]string{"Ed25519": "EdDSA", "RSA-SHA256": "RS256"}[algorithm]; document.Envelope.Alg != want {
				t.Fatalf("file envelope alg %q, want %q", document.Envelope.Alg, want)
			}
			if r := fresh.Check(); !r.OK || r.Source != "license_file" {
				t.Fatalf("fresh check after rotating to %s: %+v", algorithm, r)
			}
			// Pinned to the shipped key (PinToShippedKeys): the rotated key is refused.
			pinned := onlineClient(t, s, "rotate-pinned-"+algorithm, func(o *Options) { o.PublicKeys, o.PinToShippedKeys = client.opts.PublicKeys, true })
			if _, err := pinned.Activate(ctx, s.createLicense(t, nil)["license_key"].(string), MachineInfo{}); codeOf(err) != "UNKNOWN_KEY" {
				t.Fatalf("pinned client after rotating to %s: %v", algorithm, err)
			}
		}
	})
}

func isV2(file string) bool {
	var document map[string]json.RawMessage
	return json.Unmarshal(dearmor("LICENSE FILE", file), &document) == nil && document["envelope"] != nil
}

func jsonNumber(value interface{}) string {
	f, _ := value.(float64)
	return strconv.FormatFloat(f, 'f', -1, 64)
}
