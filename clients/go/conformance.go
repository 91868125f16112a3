package licenceclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// A conformance list (clients/conformance-format.md): every client runs the same cases through its own code paths.
// Two shapes of case: the shared list's (docs/test-vectors/conformance.json: `kind` beside `input`, keys named from
// the document's `keys`) and scenario cases (`input.kind`, `trust`, `context`) that the tests make with fresh keys.
type conformanceList struct {
	Format string                     `json:"format"`
	Keys   map[string]json.RawMessage `json:"keys"`
	Cases  []conformanceCase          `json:"cases"`
}

type conformanceCase struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Input struct {
		TrustedKeys []string          `json:"trusted_keys"`
		RevokedKeys []string          `json:"revoked_keys"`
		Envelope    json.RawMessage   `json:"envelope"`
		LicenseFile string            `json:"license_file"`
		ShippedKeys []string          `json:"shipped_keys"`
		Now         string            `json:"now"`
		Product     string            `json:"product"`
		Fingerprint string            `json:"machine_fingerprint"`
		RootKeys    []string          `json:"root_keys"`
		Published   []json.RawMessage `json:"published"`
		KeyID       string            `json:"key_id"`

		Kind       string          `json:"kind"`
		Text       string          `json:"text"`
		Answer     json.RawMessage `json:"answer"`
		Nonce      string          `json:"nonce"`
		LicenseKey string          `json:"license_key"`
	} `json:"input"`
	Trust struct {
		ShippedKeys   []json.RawMessage `json:"shipped_keys"`
		RootKeys      []json.RawMessage `json:"root_keys"`
		PublishedKeys *struct {
			Keys []json.RawMessage `json:"keys"`
		} `json:"published_keys"`
	} `json:"trust"`
	Context struct {
		Now                string `json:"now"`
		MachineFingerprint string `json:"machine_fingerprint"`
		Product            string `json:"product"`
	} `json:"context"`
	Expect struct {
		Verdict string  `json:"verdict"`
		Reason  *string `json:"reason"`
		Status  *string `json:"status"`
	} `json:"expect"`
}

type offlineTransport struct{}

func (offlineTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("conformance cases run offline")
}

func parseKeys(entries []json.RawMessage) ([]*PublicKey, error) {
	var keys []*PublicKey
	for _, raw := range entries {
		var pemText string
		var key *PublicKey
		var err error
		if json.Unmarshal(raw, &pemText) == nil {
			key, err = ParsePublicKeyPEM(pemText)
		} else {
			key, err = ParsePublicKey(raw)
		}
		if err != nil {
			return nil, err
		}
		keys = append(keys, key)
	}
	return keys, nil
}

func namedKeys(named map[string]json.RawMessage, names []string) ([]*PublicKey, error) {
	var raws []json.RawMessage
	for _, name := range names {
		raw, ok := named[name]
		if !ok {
			return nil, fmt.Errorf("no key named %q", name)
		}
		raws = append(raws, raw)
	}
	return parseKeys(raws)
}

// runSharedCase answers (verdict, reason) for a case of the shared list.
func runSharedCase(c *conformanceCase, named map[string]json.RawMessage, folder string) (string, string, error) {
	if c.Kind == "key_trust" {
		shipped, err := namedKeys(named, c.Input.ShippedKeys)
		if err != nil {
			return "", "", err
		}
		roots, err := namedKeys(named, c.Input.RootKeys)
		if err != nil {
			return "", "", err
		}
		published, revoked := parseEntries(c.Input.Published)
		if trustedKeys(shipped, roots, published, revoked)[c.Input.KeyID] != nil {
			return "trusted", "", nil
		}
		reason, ok := distrustReasons(shipped, roots, published, revoked)[c.Input.KeyID]
		if !ok {
			reason = "UNKNOWN_KEY"
		}
		return "refused", reason, nil
	}
	shipped, err := namedKeys(named, c.Input.TrustedKeys)
	if err != nil {
		return "", "", err
	}
	client, err := New(Options{
		ServerURL: "http://127.0.0.1:9/", StatePath: filepath.Join(folder, "state.json"), AppSalt: "conformance",
		PublicKeys: shipped, Fingerprint: "conformance", Retries: -1, HTTPClient: &http.Client{Transport: offlineTransport{}},
	})
	if err != nil {
		return "", "", err
	}
	state := &clientState{RevokedKeyIDs: c.Input.RevokedKeys}
	switch c.Kind {
	case "envelope":
		_, err = client.open(c.Input.Envelope, state)
	case "license_file":
		_, err = client.openLicenseFile(c.Input.LicenseFile, state)
	default:
		return "", "", fmt.Errorf("unknown case kind %q", c.Kind)
	}
	var verification *VerificationError
	if errors.As(err, &verification) {
		return "refuse", verification.Reason, nil
	}
	if err != nil {
		return "", "", err
	}
	return "accept", "", nil
}

// runClientCase runs a signed answer (validate, update check) or a trial answer through a client's own paths.
func runClientCase(c *conformanceCase, named map[string]json.RawMessage, folder string) (string, string, string, error) {
	shipped, err := namedKeys(named, c.Input.TrustedKeys)
	if err != nil {
		return "", "", "", err
	}
	now := time.Now()
	if c.Input.Now != "" {
		parsed, err := time.Parse(time.RFC3339Nano, c.Input.Now)
		if err != nil {
			return "", "", "", err
		}
		now = parsed
	}
	client, err := New(Options{
		ServerURL: "http://127.0.0.1:9/", StatePath: filepath.Join(folder, "state.json"), AppSalt: "conformance",
		PublicKeys: shipped, Product: c.Input.Product, Fingerprint: c.Input.Fingerprint, Now: func() time.Time { return now },
		Retries: -1, HTTPClient: &http.Client{Transport: offlineTransport{}},
	})
	if err != nil {
		return "", "", "", err
	}
	var result CheckResult
	if c.Kind == "signed_answer" {
		_, err = client.VerifyAnswer(context.Background(), c.Input.Answer, c.Input.Nonce, c.Input.LicenseKey)
	} else if _, err = client.StoreActivation(context.Background(), c.Input.Answer); err == nil {
		result = client.Check()
	}
	var verification *VerificationError
	if errors.As(err, &verification) {
		return "refuse", verification.Reason, "", nil
	}
	if err != nil {
		return "", "", "", err
	}
	if c.Kind == "trial" && !result.OK {
		return "refuse", result.Reason, "", nil
	}
	return "accept", "", result.Status, nil
}

// runRelayCase verifies a relay's lease answer as LeaseFromRelay does (clients/conformance-format.md, relay_lease).
func runRelayCase(c *conformanceCase, named map[string]json.RawMessage, folder string) (string, string, error) {
	shipped, err := namedKeys(named, c.Input.TrustedKeys)
	if err != nil {
		return "", "", err
	}
	now, err := time.Parse(time.RFC3339Nano, c.Input.Now)
	if err != nil {
		return "", "", err
	}
	client, err := New(Options{
		ServerURL: "http://127.0.0.1:9/", StatePath: filepath.Join(folder, "state.json"), AppSalt: "conformance",
		PublicKeys: shipped, Product: c.Input.Product, Fingerprint: c.Input.Fingerprint, Now: func() time.Time { return now },
		Retries: -1, HTTPClient: &http.Client{Transport: offlineTransport{}},
	})
	if err != nil {
		return "", "", err
	}
	_, _, err = client.verifyRelayAnswer(c.Input.Answer, &clientState{RevokedKeyIDs: c.Input.RevokedKeys})
	var verification *VerificationError
	if errors.As(err, &verification) {
		return "refuse", verification.Reason, nil
	}
	if err != nil {
		return "", "", err
	}
	return "accept", "", nil
}

// relayVectors is docs/test-vectors/relay.json: pool files, then lease answers, checked at Now with VendorJWKS.
type relayVectors struct {
	Now        string `json:"now"`
	VendorJWKS struct {
		Keys []json.RawMessage `json:"keys"`
	} `json:"vendor_jwks"`
	Pools []struct {
		Name     string      `json:"name"`
		PoolFile string      `json:"pool_file"`
		Expect   relayExpect `json:"expect"`
	} `json:"pools"`
	Leases []struct {
		Name        string          `json:"name"`
		Fingerprint string          `json:"machine_fingerprint"`
		Answer      json.RawMessage `json:"answer"`
		Expect      relayExpect     `json:"expect"`
	} `json:"leases"`
}

type relayExpect struct {
	Verdict string  `json:"verdict"`
	Reason  *string `json:"reason"`
}

// runRelayVectors runs relay.json through the client's own pool and lease checks.
func runRelayVectors(document []byte, folder string) (failures []string, total int, err error) {
	var vectors relayVectors
	if err := json.Unmarshal(document, &vectors); err != nil {
		return nil, 0, err
	}
	shipped, err := parseKeys(vectors.VendorJWKS.Keys)
	if err != nil {
		return nil, 0, err
	}
	now, err := time.Parse(time.RFC3339Nano, vectors.Now)
	if err != nil {
		return nil, 0, err
	}
	state := &clientState{Version: 1}
	judge := func(kind, name string, err error, expect relayExpect) {
		total++
		verdict, reason := "accept", ""
		var verification *VerificationError
		if errors.As(err, &verification) {
			verdict, reason = "refuse", verification.Reason
		} else if err != nil {
			verdict, reason = "error", err.Error()
		}
		wanted := ""
		if expect.Reason != nil {
			wanted = *expect.Reason
		}
		if verdict != expect.Verdict || reason != wanted {
			failures = append(failures, fmt.Sprintf("%s %s: expected %s %s, got %s %s", kind, name, expect.Verdict, wanted, verdict, reason))
		}
	}
	for _, c := range vectors.Pools {
		client, err := New(Options{ServerURL: "http://127.0.0.1:9/", StatePath: filepath.Join(folder, "state.json"), AppSalt: "conformance",
			PublicKeys: shipped, Now: func() time.Time { return now }, Retries: -1, HTTPClient: &http.Client{Transport: offlineTransport{}}})
		if err != nil {
			return nil, 0, err
		}
		_, _, err = verifyRelayPool(c.PoolFile, client.trusted(state), revokedSet(state), "", now)
		judge("pool", c.Name, err, c.Expect)
	}
	for _, c := range vectors.Leases {
		client, err := New(Options{ServerURL: "http://127.0.0.1:9/", StatePath: filepath.Join(folder, "state.json"), AppSalt: "conformance",
			PublicKeys: shipped, Fingerprint: c.Fingerprint, Now: func() time.Time { return now }, Retries: -1,
			HTTPClient: &http.Client{Transport: offlineTransport{}}})
		if err != nil {
			return nil, 0, err
		}
		_, _, err = client.verifyRelayAnswer(c.Answer, state)
		judge("lease", c.Name, err, c.Expect)
	}
	return failures, total, nil
}

// runCase answers (verdict, reason, status) for one case.
func runCase(c *conformanceCase, named map[string]json.RawMessage, folder string) (string, string, string, error) {
	if c.Kind == "relay_lease" {
		verdict, reason, err := runRelayCase(c, named, folder)
		return verdict, reason, "", err
	}
	if c.Kind == "signed_answer" || c.Kind == "trial" {
		return runClientCase(c, named, folder)
	}
	if c.Kind != "" {
		verdict, reason, err := runSharedCase(c, named, folder)
		return verdict, reason, "", err
	}
	shipped, err := parseKeys(c.Trust.ShippedKeys)
	if err != nil {
		return "", "", "", err
	}
	roots, err := parseKeys(c.Trust.RootKeys)
	if err != nil {
		return "", "", "", err
	}
	now, err := time.Parse(time.RFC3339Nano, c.Context.Now)
	if err != nil {
		return "", "", "", err
	}
	client, err := New(Options{
		ServerURL: "http://127.0.0.1:9/", StatePath: filepath.Join(folder, "state.json"), AppSalt: "conformance",
		PublicKeys: shipped, RootKeys: roots, Product: c.Context.Product, Fingerprint: c.Context.MachineFingerprint,
		Now: func() time.Time { return now }, Retries: -1, HTTPClient: &http.Client{Transport: offlineTransport{}},
	})
	if err != nil {
		return "", "", "", err
	}
	if c.Trust.PublishedKeys != nil {
		if err := client.LearnKeys(c.Trust.PublishedKeys.Keys); err != nil {
			return "", "", "", err
		}
	}
	var result CheckResult
	switch c.Input.Kind {
	case "license_file":
		result, err = client.ImportLicenseFile(c.Input.Text)
	case "activation":
		if _, err = client.StoreActivation(context.Background(), c.Input.Answer); err == nil {
			result = client.Check()
		}
	case "validation":
		if _, err = client.VerifyAnswer(context.Background(), c.Input.Answer, c.Input.Nonce, c.Input.LicenseKey); err == nil {
			return "accept", "", "", nil
		}
	default:
		return "", "", "", fmt.Errorf("unknown input kind %q", c.Input.Kind)
	}
	var verification *VerificationError
	if errors.As(err, &verification) {
		return "refuse", verification.Reason, "", nil
	}
	if err != nil {
		return "", "", "", err
	}
	if result.OK {
		return "accept", "", result.Status, nil
	}
	return "refuse", result.Reason, "", nil
}

// RunConformance runs every case of a conformance list (JSON) and returns the disagreements.
func RunConformance(document []byte) (failures []string, total int, err error) {
	var probe struct {
		Pools json.RawMessage `json:"pools"`
	}
	if json.Unmarshal(document, &probe) == nil && probe.Pools != nil {
		folder, err := os.MkdirTemp("", "licence-conformance-")
		if err != nil {
			return nil, 0, err
		}
		defer os.RemoveAll(folder)
		return runRelayVectors(document, folder)
	}
	var list conformanceList
	if err := json.Unmarshal(document, &list); err != nil {
		return nil, 0, err
	}
	for i := range list.Cases {
		c := &list.Cases[i]
		folder, err := os.MkdirTemp("", "licence-conformance-")
		if err != nil {
			return nil, 0, err
		}
		verdict, reason, status, err := runCase(c, list.Keys, folder)
		os.RemoveAll(folder)
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s: %v", c.Name, err))
			continue
		}
		wantReason := ""
		if c.Expect.Reason != nil {
			wantReason = *c.Expect.Reason
		}
		if verdict != c.Expect.Verdict || reason != wantReason || (c.Expect.Status != nil && *c.Expect.Status != status) {
			want := c.Expect.Verdict + " " + wantReason
			if c.Expect.Status != nil {
				want += " " + *c.Expect.Status
			}
			failures = append(failures, fmt.Sprintf("%s: expected %s, got %s %s %s", c.Name, want, verdict, reason, status))
		}
	}
	return failures, len(list.Cases), nil
}
