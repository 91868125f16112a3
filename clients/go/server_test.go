package licenceclient

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Starts this repository's built server (`npm run build` at the root first) on a database the test creates on
// TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) and drops afterwards.

type testServer struct {
	url, apiKey, database, dataDir string
	process                        *exec.Cmd
	exited                         chan struct{}
	log                            *bytes.Buffer
}

var (
	sharedServer     *testServer
	sharedServerErr  error
	sharedServerOnce sync.Once
)

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedServer != nil {
		sharedServer.remove()
	}
	os.Exit(code)
}

// realServer starts the server once for every online test of this package.
func realServer(t *testing.T) *testServer {
	t.Helper()
	sharedServerOnce.Do(func() { sharedServer, sharedServerErr = startTestServer() })
	if sharedServerErr != nil {
		t.Fatal(sharedServerErr)
	}
	return sharedServer
}

func pgArgs() ([]string, []string, *url.URL) {
	admin := os.Getenv("TEST_DATABASE_URL")
	if admin == "" {
		admin = "postgres://postgres@127.0.0.1:5432/postgres"
	}
	parsed, _ := url.Parse(admin)
	port := parsed.Port()
	if port == "" {
		port = "5432"
	}
	password, _ := parsed.User.Password()
	return []string{"-h", parsed.Hostname(), "-p", port, "-U", parsed.User.Username()}, append(os.Environ(), "PGPASSWORD="+password), parsed
}

func startTestServer() (*testServer, error) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	main := filepath.Join(root, "dist", "src", "main.js")
	if _, err := os.Stat(main); err != nil {
		return nil, fmt.Errorf("build the server first (npm run build at the repository root): %w", err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := listener.Addr().(*net.TCPAddr).Port
	listener.Close()
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	s := &testServer{
		url:      fmt.Sprintf("http://127.0.0.1:%d", port),
		apiKey:   "test-key-" + hex.EncodeToString(suffix) + hex.EncodeToString(suffix),
		database: "licence_client_go_test_" + hex.EncodeToString(suffix),
		log:      &bytes.Buffer{},
	}
	if s.dataDir, err = os.MkdirTemp("", "licence-client-go-"); err != nil {
		return nil, err
	}
	args, env, admin := pgArgs()
	createdb := exec.Command("createdb", append(args, s.database)...)
	createdb.Env = env
	if out, err := createdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("createdb: %v %s", err, out)
	}
	databaseURL := *admin
	databaseURL.Path = "/" + s.database
	s.process = exec.Command("node", main)
	s.process.Dir = root
	s.process.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(), fmt.Sprintf("PORT=%d", port), "DATA_DIR=" + s.dataDir,
		"DATABASE_URL=" + databaseURL.String(), "API_KEY=" + s.apiKey, "ADMIN_PASSWORD=client-test-password", "LOG_LEVEL=warn",
		"RATE_LIMIT_ACTIVATE=1000", "RATE_LIMIT_DEACTIVATE=1000", "RATE_LIMIT_VALIDATE=1000", "RATE_LIMIT_HEARTBEAT=1000",
	}
	s.process.Stdout, s.process.Stderr = s.log, s.log
	if err := s.process.Start(); err != nil {
		s.process = nil
		s.remove()
		return nil, err
	}
	s.exited = make(chan struct{})
	go func() { _ = s.process.Wait(); close(s.exited) }()
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case <-s.exited:
			s.remove()
			return nil, fmt.Errorf("server exited during start-up: %s", s.log.String())
		default:
		}
		if time.Now().After(deadline) {
			s.remove()
			return nil, fmt.Errorf("server did not start: %s", s.log.String())
		}
		if response, err := http.Get(s.url + "/api/v1/health"); err == nil {
			response.Body.Close()
			if response.StatusCode == 200 {
				return s, nil
			}
		}
		time.Sleep(150 * time.Millisecond)
	}
}

func (s *testServer) remove() {
	if s.process != nil && s.process.Process != nil {
		_ = s.process.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(20 * time.Second):
			_ = s.process.Process.Kill()
			<-s.exited
		}
	}
	args, env, _ := pgArgs()
	command := exec.Command("dropdb", append(args, "--if-exists", "--force", s.database)...)
	command.Env = env
	_ = command.Run()
	os.RemoveAll(s.dataDir)
}

func (s *testServer) call(t *testing.T, method, path string, body interface{}, admin bool) map[string]interface{} {
	t.Helper()
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(mustJSON(body))
	}
	request, _ := http.NewRequest(method, s.url+path, reader)
	if admin {
		request.Header.Set("x-api-key", s.apiKey)
	}
	if body != nil {
		request.Header.Set("content-type", "application/json")
	}
	response, err := http.DefaultClient.Do(request)
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	var parsed map[string]interface{}
	raw, _ := io.ReadAll(response.Body)
	if json.Unmarshal(raw, &parsed) != nil || response.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, response.StatusCode, raw)
	}
	return parsed
}

func (s *testServer) admin(t *testing.T, method, path string, body interface{}) map[string]interface{} {
	t.Helper()
	return s.call(t, method, "/api/v1/admin"+path, body, true)
}

func (s *testServer) createLicense(t *testing.T, overrides map[string]interface{}) map[string]interface{} {
	body := map[string]interface{}{"product_code": "POS_RETAIL", "license_type": "YEARLY", "customer_name": "Klijent d.o.o."}
	for k, v := range overrides {
		body[k] = v
	}
	return s.admin(t, "POST", "/licenses", body)
}

func fingerprintOf(seed string) string {
	raw := []byte(seed)
	for len(raw) < 32 {
		raw = append(raw, '.')
	}
	return "sha256:" + hex.EncodeToString(raw)[:64]
}

// ---- transports between the client and the real server ---------------------------------------------------------

// rewritingTransport passes each request to the real server and rewrites its successful JSON answers.
type rewritingTransport func(path string, answer map[string]interface{}) map[string]interface{}

func (rewrite rewritingTransport) RoundTrip(request *http.Request) (*http.Response, error) {
	response, err := http.DefaultTransport.RoundTrip(request)
	if err != nil || response.StatusCode >= 300 {
		return response, err
	}
	raw, err := io.ReadAll(response.Body)
	response.Body.Close()
	if err != nil {
		return nil, err
	}
	var answer map[string]interface{}
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	if decoder.Decode(&answer) == nil && answer != nil {
		raw = mustJSON(rewrite(request.URL.Path, answer))
	}
	response.Body = io.NopCloser(bytes.NewReader(raw))
	response.ContentLength = int64(len(raw))
	response.Header.Del("content-length")
	return response, nil
}

// envelopeLessTransport: a server from before envelopes (the same answers, without `envelope`).
var envelopeLessTransport = rewritingTransport(func(_ string, answer map[string]interface{}) map[string]interface{} {
	delete(answer, "envelope")
	return answer
})

// standInTransport: a stand-in server that publishes its own Ed25519 key (unendorsed) beside the real keys and
// answers with envelopes that key signs over the real server's payloads, relabelled with its key id.
func standInTransport(t *testing.T) rewritingTransport {
	_, private, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	public, err := newPublicKey(private.Public())
	if err != nil {
		t.Fatal(err)
	}
	return func(path string, answer map[string]interface{}) map[string]interface{} {
		if strings.HasSuffix(path, "/public-keys") {
			keys, _ := answer["keys"].([]interface{})
			for _, k := range keys {
				k.(map[string]interface{})["status"] = "retired"
			}
			entry := map[string]interface{}{"key_id": public.KeyID, "algorithm": "Ed25519", "public_key_pem": public.PEM(), "status": "active", "endorsements": []interface{}{}}
			answer["keys"] = append([]interface{}{entry}, keys...)
			return answer
		}
		envelope, ok := answer["envelope"].(map[string]interface{})
		if !ok {
			return answer
		}
		raw, _ := b64urlDecode(envelope["payload"].(string))
		var payload map[string]interface{}
		decoder := json.NewDecoder(bytes.NewReader(raw))
		decoder.UseNumber()
		_ = decoder.Decode(&payload)
		payload["key_id"] = public.KeyID
		signed := mustJSON(payload)
		answer["envelope"] = map[string]string{"payload": b64urlEncode(signed), "alg": "EdDSA", "key_id": public.KeyID, "signature": b64urlEncode(ed25519.Sign(private, signed))}
		if answer["license"] != nil {
			answer["license"] = payload
		}
		return answer
	}
}
