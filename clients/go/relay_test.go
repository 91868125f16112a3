package licenceclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

type relayCaseList struct {
	Keys  map[string]json.RawMessage `json:"keys"`
	Cases []struct {
		Name  string `json:"name"`
		Input struct {
			Answer      json.RawMessage `json:"answer"`
			TrustedKeys []string        `json:"trusted_keys"`
			Fingerprint string          `json:"machine_fingerprint"`
			Product     string          `json:"product"`
			Now         string          `json:"now"`
		} `json:"input"`
		Expect struct {
			Reason *string `json:"reason"`
		} `json:"expect"`
	} `json:"cases"`
}

func readRelayList(t *testing.T) ([]byte, *relayCaseList) {
	raw, err := os.ReadFile(filepath.Join("..", "relay-conformance.json"))
	if err != nil {
		t.Fatal(err)
	}
	var list relayCaseList
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	return raw, &list
}

func TestRelayVectorsOfTheServer(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "test-vectors", "relay.json"))
	if err != nil {
		t.Fatal(err)
	}
	failures, total, err := RunConformance(raw)
	if err != nil || len(failures) > 0 || total < 9 {
		t.Fatalf("%d cases, err %v, failures:\n%s", total, err, strings.Join(failures, "\n"))
	}
}

func TestRelayCaseList(t *testing.T) {
	raw, _ := readRelayList(t)
	failures, total, err := RunConformance(raw)
	if err != nil || len(failures) > 0 || total < 15 {
		t.Fatalf("%d cases, err %v, failures:\n%s", total, err, strings.Join(failures, "\n"))
	}
}

// fixedRelay is a relay on the network answering with one fixed lease answer (the real relay: relay_online_test.go).
type fixedRelay struct {
	*httptest.Server
	mu     sync.Mutex
	paths  []string
	bodies []map[string]interface{}
	leased bool
}

func startFixedRelay(answer json.RawMessage) *fixedRelay {
	relay := &fixedRelay{}
	relay.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]interface{}
		_ = json.Unmarshal(raw, &body)
		relay.mu.Lock()
		defer relay.mu.Unlock()
		relay.paths = append(relay.paths, r.URL.Path)
		relay.bodies = append(relay.bodies, body)
		w.Header().Set("content-type", "application/json")
		send := func(status int, value string) {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(value))
		}
		switch {
		case r.URL.Path == "/relay/v1/leases":
			relay.leased = true
			send(201, string(answer))
		case !relay.leased:
			send(400, `{"error":{"code":"NOT_ACTIVATED","message":"no lease","details":{}}}`)
		case r.URL.Path == "/relay/v1/leases/heartbeat":
			send(200, string(answer))
		case r.URL.Path == "/relay/v1/leases/release":
			relay.leased = false
			send(200, `{"released":1}`)
		default:
			send(404, `{"error":{"code":"NOT_FOUND","message":"no route","details":{}}}`)
		}
	}))
	return relay
}

func relayClient(t *testing.T, list *relayCaseList, name string) (*Client, json.RawMessage, *string) {
	for _, c := range list.Cases {
		if c.Name != name {
			continue
		}
		keys, err := namedKeys(list.Keys, c.Input.TrustedKeys)
		if err != nil {
			t.Fatal(err)
		}
		now, _ := time.Parse(time.RFC3339Nano, c.Input.Now)
		client, err := New(Options{
			ServerURL: "http://127.0.0.1:9/", StatePath: filepath.Join(t.TempDir(), "state.json"), AppSalt: "relay-test",
			PublicKeys: keys, PinToShippedKeys: true, Fingerprint: c.Input.Fingerprint, Product: c.Input.Product,
			Now: func() time.Time { return now }, Retries: -1,
		})
		if err != nil {
			t.Fatal(err)
		}
		return client, c.Input.Answer, c.Expect.Reason
	}
	t.Fatalf("no case %s", name)
	return nil, nil, nil
}

func TestLeaseFromRelayLeasesHeartbeatsAndReleases(t *testing.T) {
	_, list := readRelayList(t)
	client, answer, _ := relayClient(t, list, "relay-valid")
	relay := startFixedRelay(answer)
	defer relay.Close()
	ctx := context.Background()
	seat, err := client.LeaseFromRelay(ctx, relay.URL, "bench-7")
	if err != nil {
		t.Fatal(err)
	}
	if seat.Lease.LeaseID != "8a1f2b3c-4d5e-4f60-8172-93a4b5c6d7e8" || seat.Pool.Seats != 10 || !strings.Contains(string(seat.Pool.License), `"CAD_SUITE"`) {
		t.Fatalf("lease %+v pool %+v", seat.Lease, seat.Pool)
	}
	fingerprint, _ := client.Fingerprint()
	if !reflect.DeepEqual(relay.bodies[0], map[string]interface{}{"machine_fingerprint": fingerprint, "hostname": "bench-7"}) {
		t.Fatalf("sent %v", relay.bodies[0])
	}
	if lease, err := seat.Heartbeat(ctx); err != nil || lease.LeaseID != seat.Lease.LeaseID {
		t.Fatalf("heartbeat: %v %v", lease, err)
	}
	if released, err := seat.Release(ctx); err != nil || released != 1 {
		t.Fatalf("release: %d %v", released, err)
	}
	var serverErr *ServerError
	if _, err := seat.Heartbeat(ctx); !errors.As(err, &serverErr) || serverErr.Code != "NOT_ACTIVATED" {
		t.Fatalf("heartbeat after release: %v", err)
	}
	want := []string{"/relay/v1/leases", "/relay/v1/leases/heartbeat", "/relay/v1/leases/release", "/relay/v1/leases/heartbeat"}
	if !reflect.DeepEqual(relay.paths, want) {
		t.Fatalf("paths %v", relay.paths)
	}
}

func TestLeaseFromRelayRefusesAForgedPoolOrALeaseSignedByAnotherKey(t *testing.T) {
	_, list := readRelayList(t)
	for _, name := range []string{"relay-pool-forged", "relay-pool-unknown-key", "relay-lease-other-key", "relay-lease-vendor-key", "relay-lease-other-fingerprint"} {
		t.Run(name, func(t *testing.T) {
			client, answer, reason := relayClient(t, list, name)
			relay := startFixedRelay(answer)
			defer relay.Close()
			_, err := client.LeaseFromRelay(context.Background(), relay.URL, "")
			var verification *VerificationError
			if !errors.As(err, &verification) || verification.Reason != *reason {
				t.Fatalf("want %s, got %v", *reason, err)
			}
		})
	}
}

func TestRelayHeartbeatLoopStopsWhenTheSeatIsGone(t *testing.T) {
	_, list := readRelayList(t)
	client, answer, _ := relayClient(t, list, "relay-valid")
	relay := startFixedRelay(answer)
	defer relay.Close()
	seat, err := client.LeaseFromRelay(context.Background(), relay.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	// The fixture's interval is 100 s; 0.05 s is what a short RELAY_LEASE_SECONDS gives.
	seat.Lease.HeartbeatIntervalSeconds = 0.05
	beats, lost := 0, ""
	loop := seat.StartHeartbeat(RelayHeartbeatOptions{
		OnBeat: func(lease *RelayLease) {
			beats++
			lease.HeartbeatIntervalSeconds = 0.05
			if beats == 2 {
				_, _ = seat.Release(context.Background())
			}
		},
		OnLeaseLost: func(err *ServerError) { lost = err.Code },
	})
	select {
	case <-loop.Done:
	case <-time.After(10 * time.Second):
		loop.Stop()
		t.Fatal("the loop did not stop")
	}
	if beats != 2 || lost != "NOT_ACTIVATED" {
		t.Fatalf("beats %d, lost %q", beats, lost)
	}
}

func TestStateFolderIsCreatedWithMode0700(t *testing.T) {
	_, list := readRelayList(t)
	root := t.TempDir()
	keys, _ := namedKeys(list.Keys, []string{"ed25519"})
	if _, err := New(Options{ServerURL: "http://127.0.0.1:9/", StatePath: filepath.Join(root, "app", "licence", "state.json"), AppSalt: "x", PublicKeys: keys}); err != nil {
		t.Fatal(err)
	}
	for _, folder := range []string{filepath.Join(root, "app"), filepath.Join(root, "app", "licence")} {
		info, err := os.Stat(folder)
		if err != nil || !info.IsDir() || info.Mode().Perm() != 0o700 {
			t.Fatalf("%s: %v %v", folder, info, err)
		}
	}
}

func TestStateFolderThatCannotBeCreatedIsAStateErrorBeforeAnyNetworkCall(t *testing.T) {
	_, list := readRelayList(t)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a-file"), []byte("not a folder"), 0o600); err != nil {
		t.Fatal(err)
	}
	requests := 0
	keys, _ := namedKeys(list.Keys, []string{"ed25519"})
	path := filepath.Join(root, "a-file", "state.json")
	_, err := New(Options{
		ServerURL: "http://127.0.0.1:9/", StatePath: path, AppSalt: "x", PublicKeys: keys,
		HTTPClient: &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
			requests++
			return nil, errors.New("no network")
		})},
	})
	var stateErr *StateError
	var networkErr *NetworkError
	if !errors.As(err, &stateErr) || stateErr.Code != "STATE_PATH" || stateErr.Path != path || errors.As(err, &networkErr) || requests != 0 {
		t.Fatalf("want a StateError STATE_PATH, got %v (%d requests)", err, requests)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
