package licenceclient

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
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

// ---- envelopes for answers of a server that does not send them yet ---------------------------------------------

// jcs is RFC 8785 for the values these answers hold (strings, integers, booleans, null): sorted members, no spaces.
func jcs(value interface{}) []byte {
	var out bytes.Buffer
	encoder := json.NewEncoder(&out)
	encoder.SetEscapeHTML(false)
	_ = encoder.Encode(value)
	return bytes.TrimRight(out.Bytes(), "\n")
}

func legacyEnvelope(signed []byte, signature, keyID string) map[string]string {
	encoded := strings.TrimPrefix(signature, "RSA-SHA256:")
	raw, _ := base64.StdEncoding.DecodeString(encoded)
	return map[string]string{"payload": b64urlEncode(signed), "alg": "RS256", "key_id": keyID, "signature": b64urlEncode(raw)}
}

// withEnvelope adds the envelope the server will send beside today's fields: the bytes today's signature covers
// and, for RSA, the same signature; the client then verifies the server's own signature through the envelope.
func withEnvelope(path string, raw []byte) []byte {
	var answer map[string]interface{}
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	if decoder.Decode(&answer) != nil || answer["envelope"] != nil {
		return raw
	}
	switch {
	case strings.HasSuffix(path, "/activate") && answer["license"] != nil:
		license := answer["license"].(map[string]interface{})
		answer["envelope"] = legacyEnvelope(jcs(license), answer["signature"].(string), license["key_id"].(string))
	case (strings.HasSuffix(path, "/validate") || strings.HasSuffix(path, "/usage")) && answer["signature"] != nil:
		signed := map[string]interface{}{}
		for k, v := range answer {
			if k != "signature" {
				signed[k] = v
			}
		}
		answer["envelope"] = legacyEnvelope(jcs(signed), answer["signature"].(string), answer["key_id"].(string))
	case strings.HasSuffix(path, "/license-file") && answer["license_file"] != nil:
		answer["license_file"] = licenseFileV2(answer["license_file"].(string))
	default:
		return raw
	}
	return jcs(answer)
}

func licenseFileV2(text string) string {
	var document map[string]interface{}
	decoder := json.NewDecoder(bytes.NewReader(dearmor("LICENSE FILE", text)))
	decoder.UseNumber()
	if decoder.Decode(&document) != nil || document["envelope"] != nil {
		return text
	}
	license := document["license"].(map[string]interface{})
	document["envelope"] = legacyEnvelope(jcs(license), document["signature"].(string), license["key_id"].(string))
	return armor("LICENSE FILE", jcs(document))
}

type envelopingTransport struct{}

func (envelopingTransport) RoundTrip(request *http.Request) (*http.Response, error) {
	response, err := http.DefaultTransport.RoundTrip(request)
	if err != nil || response.StatusCode >= 300 {
		return response, err
	}
	raw, err := io.ReadAll(response.Body)
	response.Body.Close()
	if err != nil {
		return nil, err
	}
	body := withEnvelope(request.URL.Path, raw)
	response.Body = io.NopCloser(bytes.NewReader(body))
	response.ContentLength = int64(len(body))
	response.Header.Del("content-length")
	return response, nil
}
