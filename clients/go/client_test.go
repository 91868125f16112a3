package licenceclient

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestConformanceListMadeByThisTest(t *testing.T) {
	failures, total, err := RunConformance(goConformanceList(t))
	if err != nil || len(failures) > 0 || total < 20 {
		t.Fatalf("%d cases, err %v, failures:\n%s", total, err, strings.Join(failures, "\n"))
	}
}

func TestSharedConformanceList(t *testing.T) {
	document, err := os.ReadFile(filepath.Join("..", "..", "docs", "test-vectors", "conformance.json"))
	if err != nil {
		t.Fatal(err)
	}
	failures, total, err := RunConformance(document)
	if err != nil || len(failures) > 0 || total == 0 {
		t.Fatalf("%d cases, err %v, failures:\n%s", total, err, strings.Join(failures, "\n"))
	}
}

// Key ids, thumbprints, endorsements and envelopes as the server's own library (Node's crypto) makes them.
func TestConformanceListMadeWithNodesCrypto(t *testing.T) {
	document, err := exec.Command("node", filepath.Join("..", "conformance-from-node.mjs")).Output()
	if err != nil {
		t.Fatal(err)
	}
	failures, total, err := RunConformance(document)
	if err != nil || len(failures) > 0 || total != 6 {
		t.Fatalf("%d cases, err %v, failures:\n%s", total, err, strings.Join(failures, "\n"))
	}
}

func TestWrongExpectationIsReported(t *testing.T) {
	var list map[string][]map[string]interface{}
	_ = json.Unmarshal(goConformanceList(t), &list)
	list["cases"] = list["cases"][:2]
	list["cases"][0]["expect"] = map[string]interface{}{"verdict": "refuse", "reason": "EXPIRED"}
	failures, _, err := RunConformance(mustJSON(list))
	if err != nil || len(failures) != 1 || !strings.Contains(failures[0], "rsa-file") {
		t.Fatalf("failures %v, err %v", failures, err)
	}
}

func TestBase64urlIsStrict(t *testing.T) {
	for _, raw := range [][]byte{{}, {0xfb}, {0xfb, 0xff}, {0xfb, 0xff, 0xbe}} {
		if back, err := b64urlDecode(b64urlEncode(raw)); err != nil || string(back) != string(raw) {
			t.Fatalf("round trip of %x: %x %v", raw, back, err)
		}
	}
	for _, bad := range []string{"+/8", "-_8=", "A", "AB=", "AB C", "AAB", "AB\n"} {
		if _, err := b64urlDecode(bad); err == nil {
			t.Fatalf("%q decoded", bad)
		}
	}
}

type clock struct{ at time.Time }

func (c *clock) now() time.Time { return c.at }

type transportFunc func(*http.Request) (*http.Response, error)

func (f transportFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func jsonResponse(status int, body []byte) *http.Response {
	return &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(string(body)))}
}

func offlineClient(t *testing.T, key *testKey, c *clock, transport http.RoundTripper, mutate func(*Options)) *Client {
	t.Helper()
	if transport == nil {
		transport = offlineTransport{}
	}
	opts := Options{
		ServerURL: "http://127.0.0.1:9/", StatePath: filepath.Join(t.TempDir(), "state.json"), AppSalt: "offline-test",
		PublicKeys: []*PublicKey{key.public}, Fingerprint: vFingerprint, Product: "POS_RETAIL", Now: c.now, Retries: -1,
		HTTPClient: &http.Client{Transport: transport},
	}
	return newTestClient(t, opts, mutate)
}

// newTestClient applies a test's changes to the options and builds the client.
func newTestClient(t *testing.T, opts Options, mutate func(*Options)) *Client {
	t.Helper()
	if mutate != nil {
		mutate(&opts)
	}
	client, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func startClock() *clock {
	t, _ := time.Parse(time.RFC3339Nano, vNow)
	return &clock{t}
}

// codeOf is the reason of a VerificationError or the code of a ServerError.
func codeOf(err error) string {
	var v *VerificationError
	var s *ServerError
	if errors.As(err, &v) {
		return v.Reason
	}
	if errors.As(err, &s) {
		return s.Code
	}
	return ""
}

func TestStateDependentReasons(t *testing.T) {
	rsa1 := newTestKey(t, "RSA-SHA256")
	c := startClock()
	client := offlineClient(t, rsa1, c, nil, nil)
	if r := client.Check(); r.Reason != "NO_LICENSE" {
		t.Fatalf("empty: %+v", r)
	}
	policy := map[string]interface{}{"heartbeat_timeout_seconds": 60, "max_deactivations_per_30_days": nil, "license_file_ttl_days": 30}
	if _, err := client.StoreActivation(context.Background(), mustJSON(vSigned(rsa1, vLicence(rsa1, map[string]interface{}{"policy": policy}), ""))); err != nil {
		t.Fatal(err)
	}
	if r := client.Check(); !r.OK || r.Source != "activation" {
		t.Fatalf("stored: %+v", r)
	}
	entries, _ := os.ReadDir(filepath.Dir(client.store.path))
	if info, _ := os.Stat(client.store.path); len(entries) != 1 || info.Mode().Perm() != 0o600 {
		t.Fatalf("state written atomically and privately: %d entries, mode %v", len(entries), info.Mode())
	}
	c.at = c.at.Add(61 * time.Second)
	if r := client.Check(); r.Reason != "HEARTBEAT_OVERDUE" {
		t.Fatalf("overdue: %+v", r)
	}
	_ = client.update(func(s *clientState) { s.SeatLost = &seatLost{Code: "NOT_ACTIVATED", At: formatTime(c.at)} })
	if r := client.Check(); r.Reason != "SEAT_LOST" {
		t.Fatalf("lost: %+v", r)
	}
	code := "KEY_REVOKED"
	_ = client.update(func(s *clientState) {
		s.LastValidation = &lastValidation{Valid: false, Status: "revoked", Code: &code, CheckedAt: formatTime(c.at)}
	})
	if r := client.Check(); r.Reason != "INVALIDATED" {
		t.Fatalf("invalidated: %+v", r)
	}
	text, _ := os.ReadFile(client.store.path)
	_ = os.WriteFile(client.store.path, []byte(strings.Replace(string(text), "KEY_REVOKED", "KEY_REVOKEX", 1)), 0o600)
	if r := client.Check(); r.Reason != "STATE_TAMPERED" {
		t.Fatalf("tampered: %+v", r)
	}
	_ = os.WriteFile(client.store.path, []byte(`{"state": {"version": 1`), 0o600)
	if r := client.Check(); r.Reason != "STATE_CORRUPT" {
		t.Fatalf("corrupt: %+v", r)
	}
}

func TestOfflineTooLongAndGrace(t *testing.T) {
	rsa1 := newTestKey(t, "RSA-SHA256")
	c := startClock()
	client := offlineClient(t, rsa1, c, nil, func(o *Options) { o.MaxOfflineDays = 14 })
	if _, err := client.StoreActivation(context.Background(), mustJSON(vSigned(rsa1, vLicence(rsa1, map[string]interface{}{"expires_at": isoAt(day)}), ""))); err != nil {
		t.Fatal(err)
	}
	c.at = c.at.Add(2 * day)
	if r := client.Check(); !r.OK || r.Status != "grace" || r.GraceEndsAt == nil {
		t.Fatalf("grace: %+v", r)
	}
	c.at = c.at.Add(13 * day)
	if r := client.Check(); r.Reason != "OFFLINE_TOO_LONG" {
		t.Fatalf("offline: %+v", r)
	}
}

// A key list served through the client's own HTTP path: endorsed keys are followed, others refused, revocations stick.
type fakeServer struct {
	published []byte
	answer    []byte
	fetches   int
}

func (f *fakeServer) RoundTrip(r *http.Request) (*http.Response, error) {
	switch r.URL.Path {
	case "/api/v1/public-keys":
		f.fetches++
		return jsonResponse(200, f.published), nil
	case "/api/v1/activate":
		return jsonResponse(200, f.answer), nil
	}
	return nil, errors.New("unexpected " + r.URL.Path)
}

func TestRotationRSAEd25519RSAWithOnlyTheFirstKeyShipped(t *testing.T) {
	rsa1, ed, rsa2 := newTestKey(t, "RSA-SHA256"), newTestKey(t, "Ed25519"), newTestKey(t, "RSA-SHA256")
	server := &fakeServer{
		published: mustJSON(map[string]interface{}{"keys": []interface{}{rsa2.entry("active", ed.endorse(rsa2)), ed.entry("retired", rsa1.endorse(ed)), rsa1.entry("retired")}}),
		answer:    mustJSON(vSigned(rsa2, vLicence(rsa2, nil), "")),
	}
	client := offlineClient(t, rsa1, startClock(), server, nil)
	license, err := client.Activate(context.Background(), vLicenseKey, MachineInfo{Hostname: "till"})
	if err != nil || license.KeyID != rsa2.KeyID {
		t.Fatalf("activate: %v %+v", err, license)
	}
	if r := client.Check(); !r.OK {
		t.Fatalf("check: %+v", r)
	}
}

func TestStandInServerIsRefused(t *testing.T) {
	rsa1, standIn := newTestKey(t, "RSA-SHA256"), newTestKey(t, "RSA-SHA256")
	server := &fakeServer{
		published: mustJSON(map[string]interface{}{"keys": []interface{}{standIn.entry("active"), rsa1.entry("retired")}}),
		answer:    mustJSON(vSigned(standIn, vLicence(standIn, nil), "")),
	}
	client := offlineClient(t, rsa1, startClock(), server, nil)
	if _, err := client.Activate(context.Background(), vLicenseKey, MachineInfo{}); codeOf(err) != "UNKNOWN_KEY" {
		t.Fatalf("stand-in accepted: %v", err)
	}
	if r := client.Check(); r.Reason != "NO_LICENSE" {
		t.Fatalf("check: %+v", r)
	}
}

func TestRevokedKeyIsDroppedForGood(t *testing.T) {
	rsa1, rsa2 := newTestKey(t, "RSA-SHA256"), newTestKey(t, "RSA-SHA256")
	server := &fakeServer{published: mustJSON(map[string]interface{}{"keys": []interface{}{rsa1.entry("active")}}), answer: mustJSON(vSigned(rsa1, vLicence(rsa1, nil), ""))}
	client := offlineClient(t, rsa1, startClock(), server, nil)
	if _, err := client.Activate(context.Background(), vLicenseKey, MachineInfo{}); err != nil {
		t.Fatal(err)
	}
	server.published = mustJSON(map[string]interface{}{"keys": []interface{}{rsa2.entry("active", rsa1.endorse(rsa2)), rsa1.entry("revoked")}})
	if _, err := client.RefreshKeys(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := client.Check(); r.Reason != "KEY_REVOKED" {
		t.Fatalf("revoked: %+v", r)
	}
	server.published = mustJSON(map[string]interface{}{"keys": []interface{}{rsa1.entry("active")}})
	_, _ = client.RefreshKeys(context.Background())
	if r := client.Check(); r.Reason != "KEY_REVOKED" {
		t.Fatalf("a revocation is final: %+v", r)
	}
}

func TestLicenceFileVersions(t *testing.T) {
	rsa1 := newTestKey(t, "RSA-SHA256")
	client := offlineClient(t, rsa1, startClock(), nil, nil)
	r, err := client.ImportLicenseFile(vFile(rsa1, nil))
	if err != nil || !r.OK || r.Source != "license_file" || r.FileExpiresAt == nil {
		t.Fatalf("v2: %v %+v", err, r)
	}
	v1 := vSigned(rsa1, vLicence(rsa1, nil), "")
	delete(v1, "envelope")
	if _, err := client.ImportLicenseFile(armor("LICENSE FILE", mustJSON(v1))); codeOf(err) != "UNSUPPORTED_FORMAT" {
		t.Fatalf("v1: %v", err)
	}
	if r := client.Check(); !r.OK {
		t.Fatalf("a refused import keeps the stored file: %+v", r)
	}
}

func TestOptionsAndActivationRequest(t *testing.T) {
	rsa1 := newTestKey(t, "RSA-SHA256")
	if _, err := New(Options{StatePath: "x", AppSalt: "s"}); err == nil {
		t.Fatal("no keys accepted")
	}
	if _, err := ParsePublicKey(mustJSON(map[string]string{"kid": "0000000000000000", "public_key_pem": rsa1.public.PEM()})); err == nil {
		t.Fatal("a mislabelled key accepted")
	}
	if key, err := ParsePublicKey(mustJSON(map[string]string{"kty": "OKP", "crv": "Ed25519", "x": b64urlEncode([]byte(newTestKey(t, "Ed25519").public.key.(ed25519.PublicKey)))})); err != nil || key.Algorithm != "Ed25519" {
		t.Fatalf("OKP JWK: %v", err)
	}
	client := offlineClient(t, rsa1, startClock(), nil, nil)
	text, err := client.CreateActivationRequest(vLicenseKey, MachineInfo{Hostname: "vault", AppVersion: "2.0"})
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]interface{}
	if json.Unmarshal(dearmor("ACTIVATION REQUEST", text), &body) != nil || body["machine_fingerprint"] != vFingerprint || body["product"] != "POS_RETAIL" || body["app_version"] != "2.0" || body["envelope"] != true {
		t.Fatalf("request: %q", text)
	}
	a := DefaultFingerprint("a", MachineID())
	if !fingerprintPattern.MatchString(a) || a == DefaultFingerprint("b", MachineID()) {
		t.Fatalf("fingerprint %s", a)
	}
}
