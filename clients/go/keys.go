package licenceclient

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"sort"
)

// Public keys, signed envelopes and endorsement chains (docs/clients.md, Envelopes and trusted keys).
// A verifier decodes, verifies, then parses: nothing here canonicalizes JSON.

const endorsementPrefix = "licence-server-endorsement-v1:"

var b64urlPattern = regexp.MustCompile(`^[A-Za-z0-9_-]*$`)

func b64urlEncode(raw []byte) string { return base64.RawURLEncoding.EncodeToString(raw) }

// b64urlDecode is strict base64url without padding: the standard alphabet, padding or stray bits are refused.
func b64urlDecode(text string) ([]byte, error) {
	if !b64urlPattern.MatchString(text) || len(text)%4 == 1 {
		return nil, errors.New("not unpadded base64url")
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(text)
	if err != nil || b64urlEncode(raw) != text {
		return nil, errors.New("not the canonical base64url of its bytes")
	}
	return raw, nil
}

// PublicKey is an RSA or Ed25519 public key; its KeyID is always computed from the key, never taken from input.
type PublicKey struct {
	KeyID     string
	Algorithm string // "RSA-SHA256" or "Ed25519"
	key       crypto.PublicKey
}

// Alg is the envelope's name of this key's algorithm.
func (k *PublicKey) Alg() string {
	if k.Algorithm == "Ed25519" {
		return "EdDSA"
	}
	return "RS256"
}

func newPublicKey(key crypto.PublicKey) (*PublicKey, error) {
	var algorithm string
	switch k := key.(type) {
	case *rsa.PublicKey:
		algorithm = "RSA-SHA256"
	case ed25519.PublicKey:
		if len(k) != ed25519.PublicKeySize {
			return nil, errors.New("an Ed25519 key has 32 bytes")
		}
		algorithm = "Ed25519"
	default:
		return nil, errors.New("only RSA and Ed25519 public keys sign licences")
	}
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(der)
	return &PublicKey{KeyID: hex.EncodeToString(sum[:])[:16], Algorithm: algorithm, key: key}, nil
}

// ParsePublicKeyPEM reads a PEM "PUBLIC KEY" (DER SubjectPublicKeyInfo).
func ParsePublicKeyPEM(text string) (*PublicKey, error) {
	block, _ := pem.Decode([]byte(text))
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, errors.New("not a PEM public key")
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	return newPublicKey(key)
}

// keyEntry is a `/public-keys` entry or a JWK; only the members a client needs.
type keyEntry struct {
	KeyID        *string           `json:"key_id"`
	Kid          *string           `json:"kid"`
	Status       string            `json:"status"`
	PublicKeyPEM *string           `json:"public_key_pem"`
	Kty          string            `json:"kty"`
	Crv          string            `json:"crv"`
	N            string            `json:"n"`
	E            string            `json:"e"`
	X            string            `json:"x"`
	Endorsements []json.RawMessage `json:"endorsements"`
}

// ParsePublicKey reads a `/public-keys` entry (`public_key_pem`) or a JWK (RSA, or OKP Ed25519). A key labelled
// with another key's id is refused.
func ParsePublicKey(raw []byte) (*PublicKey, error) {
	var entry keyEntry
	if err := json.Unmarshal(raw, &entry); err != nil {
		return nil, err
	}
	return entry.key()
}

func (e *keyEntry) key() (*PublicKey, error) {
	var key *PublicKey
	var err error
	switch {
	case e.PublicKeyPEM != nil:
		key, err = ParsePublicKeyPEM(*e.PublicKeyPEM)
	case e.Kty == "RSA":
		n, errN := b64urlDecode(e.N)
		x, errE := b64urlDecode(e.E)
		if errN != nil || errE != nil || len(x) > 4 {
			return nil, errors.New("malformed RSA JWK")
		}
		key, err = newPublicKey(&rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(x).Int64())})
	case e.Kty == "OKP" && e.Crv == "Ed25519":
		x, errX := b64urlDecode(e.X)
		if errX != nil {
			return nil, errX
		}
		key, err = newPublicKey(ed25519.PublicKey(x))
	default:
		return nil, errors.New("unsupported public key")
	}
	if err != nil {
		return nil, err
	}
	for _, claimed := range []*string{e.KeyID, e.Kid} {
		if claimed != nil && *claimed != key.KeyID {
			return nil, fmt.Errorf("key %s is labelled with another key's id", key.KeyID)
		}
	}
	return key, nil
}

func intB64url(v *big.Int) string {
	raw := v.Bytes()
	if len(raw) == 0 {
		raw = []byte{0}
	}
	return b64urlEncode(raw)
}

// Thumbprint is RFC 7638: SHA-256 over the JWK's required members in lexicographic order, without whitespace.
func (k *PublicKey) Thumbprint() []byte {
	var text string
	switch key := k.key.(type) {
	case *rsa.PublicKey:
		text = fmt.Sprintf(`{"e":"%s","kty":"RSA","n":"%s"}`, intB64url(big.NewInt(int64(key.E))), intB64url(key.N))
	case ed25519.PublicKey:
		text = fmt.Sprintf(`{"crv":"Ed25519","kty":"OKP","x":"%s"}`, b64urlEncode(key))
	}
	sum := sha256.Sum256([]byte(text))
	return sum[:]
}

// PEM is the key as a PEM "PUBLIC KEY".
func (k *PublicKey) PEM() string {
	der, _ := x509.MarshalPKIXPublicKey(k.key)
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// EndorsementMessage is what a key signs to endorse `k`.
func EndorsementMessage(k *PublicKey) []byte {
	return []byte(endorsementPrefix + b64urlEncode(k.Thumbprint()))
}

var errAlgMismatch = errors.New("alg mismatch")

// verify reports whether signature is this key's over message under alg; errAlgMismatch when alg is not the key's.
func (k *PublicKey) verify(alg string, message, signature []byte) (bool, error) {
	if alg != k.Alg() {
		return false, errAlgMismatch
	}
	switch key := k.key.(type) {
	case *rsa.PublicKey:
		sum := sha256.Sum256(message)
		return rsa.VerifyPKCS1v15(key, crypto.SHA256, sum[:], signature) == nil, nil
	case ed25519.PublicKey:
		return ed25519.Verify(key, message, signature), nil
	}
	return false, nil
}

type publishedKey struct {
	key          *PublicKey
	endorsements []json.RawMessage
}

func parseEntries(entries []json.RawMessage) (published []publishedKey, revoked map[string]bool) {
	revoked = map[string]bool{}
	for _, raw := range entries {
		var entry keyEntry
		if json.Unmarshal(raw, &entry) != nil {
			continue
		}
		key, err := entry.key()
		if err != nil {
			continue // a malformed entry is skipped; the others still count
		}
		if entry.Status == "revoked" {
			revoked[key.KeyID] = true
		}
		published = append(published, publishedKey{key, entry.Endorsements})
	}
	return published, revoked
}

// trustedKeys: the shipped keys, then every published key endorsed by a trusted key or an offline root, repeated
// until nothing changes (keys endorsing each other in a loop never start). A revoked key is dropped, shipped or
// not, and endorses nothing.
func trustedKeys(shipped, roots []*PublicKey, published []publishedKey, revoked map[string]bool) map[string]*PublicKey {
	trusted := map[string]*PublicKey{}
	endorsers := map[string]*PublicKey{}
	for _, k := range shipped {
		if !revoked[k.KeyID] {
			trusted[k.KeyID] = k
			endorsers[k.KeyID] = k
		}
	}
	for _, k := range roots {
		if !revoked[k.KeyID] {
			endorsers[k.KeyID] = k
		}
	}
	for changed := true; changed; {
		changed = false
		for _, candidate := range published {
			id := candidate.key.KeyID
			if trusted[id] != nil || revoked[id] {
				continue
			}
			for _, raw := range candidate.endorsements {
				if endorses(endorsers, candidate.key, raw) {
					trusted[id] = candidate.key
					endorsers[id] = candidate.key
					changed = true
					break
				}
			}
		}
	}
	return trusted
}

// distrustReasons says why each published key that is not trusted is refused (docs/signing.md, Endorsed rotation):
// KEY_REVOKED, UNENDORSED_KEY (no endorsement), INVALID_ENDORSEMENT (a trusted key's endorsement that does not
// verify), ENDORSEMENT_LOOP (untrusted keys endorsing each other), ENDORSER_REVOKED, else ENDORSER_UNKNOWN.
func distrustReasons(shipped, roots []*PublicKey, published []publishedKey, revoked map[string]bool) map[string]string {
	trusted := trustedKeys(shipped, roots, published, revoked)
	anchors := map[string]bool{}
	for id := range trusted {
		anchors[id] = true
	}
	for _, k := range roots {
		if !revoked[k.KeyID] {
			anchors[k.KeyID] = true
		}
	}
	endorsersOf := map[string][]string{}
	for _, p := range published {
		for _, raw := range p.endorsements {
			var e struct {
				KeyID string `json:"key_id"`
			}
			if json.Unmarshal(raw, &e) == nil {
				endorsersOf[p.key.KeyID] = append(endorsersOf[p.key.KeyID], e.KeyID)
			}
		}
	}
	any := func(ids []string, in map[string]bool) bool {
		for _, id := range ids {
			if in[id] {
				return true
			}
		}
		return false
	}
	reasons := map[string]string{}
	for _, p := range published {
		id := p.key.KeyID
		endorsers := endorsersOf[id]
		switch {
		case trusted[id] != nil:
			continue
		case revoked[id]:
			reasons[id] = "KEY_REVOKED"
		case len(endorsers) == 0:
			reasons[id] = "UNENDORSED_KEY"
		case any(endorsers, anchors):
			reasons[id] = "INVALID_ENDORSEMENT"
		case leadsBack(id, endorsersOf, anchors):
			reasons[id] = "ENDORSEMENT_LOOP"
		case any(endorsers, revoked):
			reasons[id] = "ENDORSER_REVOKED"
		default:
			reasons[id] = "ENDORSER_UNKNOWN"
		}
	}
	return reasons
}

// leadsBack reports whether following untrusted endorsers from start comes back to start.
func leadsBack(start string, endorsersOf map[string][]string, anchors map[string]bool) bool {
	seen := map[string]bool{}
	queue := append([]string(nil), endorsersOf[start]...)
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		if id == start {
			return true
		}
		if seen[id] || anchors[id] {
			continue
		}
		seen[id] = true
		queue = append(queue, endorsersOf[id]...)
	}
	return false
}

func endorses(endorsers map[string]*PublicKey, key *PublicKey, raw json.RawMessage) bool {
	var endorsement struct {
		KeyID     string `json:"key_id"`
		Signature string `json:"signature"`
	}
	if json.Unmarshal(raw, &endorsement) != nil {
		return false
	}
	endorser := endorsers[endorsement.KeyID]
	if endorser == nil || endorser.KeyID == key.KeyID {
		return false
	}
	signature, err := b64urlDecode(endorsement.Signature)
	if err != nil {
		return false
	}
	ok, err := endorser.verify(endorser.Alg(), EndorsementMessage(key), signature)
	return ok && err == nil
}

// openEnvelope decodes and verifies `{payload, alg, key_id, signature}` and returns the payload bytes (a JSON
// object): the signed bytes are exactly the decoded payload.
func openEnvelope(raw json.RawMessage, trusted map[string]*PublicKey, revoked map[string]bool) ([]byte, error) {
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil || members == nil {
		return nil, verr("MALFORMED_ENVELOPE", "an envelope is a JSON object")
	}
	if len(members) != 4 {
		return nil, verr("MALFORMED_ENVELOPE", "an envelope has exactly the members payload, alg, key_id and signature")
	}
	fields := map[string]string{}
	for _, name := range []string{"payload", "alg", "key_id", "signature"} {
		var value string
		if members[name] == nil || json.Unmarshal(members[name], &value) != nil {
			return nil, verr("MALFORMED_ENVELOPE", "an envelope has exactly the strings payload, alg, key_id and signature")
		}
		fields[name] = value
	}
	if fields["alg"] != "RS256" && fields["alg"] != "EdDSA" {
		return nil, verr("MALFORMED_ENVELOPE", fmt.Sprintf("unknown alg %q", fields["alg"]))
	}
	payload, err1 := b64urlDecode(fields["payload"])
	signature, err2 := b64urlDecode(fields["signature"])
	if err1 != nil || err2 != nil {
		return nil, verr("NON_CANONICAL_ENCODING", "payload and signature are base64url without padding")
	}
	keyID := fields["key_id"]
	if revoked[keyID] {
		return nil, verr("KEY_REVOKED", fmt.Sprintf("signed with key %s, which the server lists as revoked", keyID))
	}
	key := trusted[keyID]
	if key == nil {
		return nil, verr("UNKNOWN_KEY", fmt.Sprintf("signed with key %s, which this client does not trust", keyID))
	}
	ok, err := key.verify(fields["alg"], payload, signature)
	if err != nil {
		return nil, verr("ALG_MISMATCH", fmt.Sprintf("alg %s does not match key %s (%s)", fields["alg"], keyID, key.Algorithm))
	}
	if !ok {
		return nil, verr("INVALID_SIGNATURE", "the signature does not match the payload")
	}
	var object map[string]json.RawMessage
	if !json.Valid(payload) || json.Unmarshal(payload, &object) != nil || object == nil {
		return nil, verr("MALFORMED_PAYLOAD", "the payload is not a JSON object")
	}
	if rawID, present := object["key_id"]; present {
		var named string
		if json.Unmarshal(rawID, &named) != nil || named != keyID {
			return nil, verr("PAYLOAD_MISMATCH", "the payload names another key than the envelope")
		}
	}
	return payload, nil
}

// sameJSON compares two JSON texts as values: member order does not matter, `true` is not `1`, `1` equals `1.0`.
func sameJSON(a, b []byte) bool {
	var x, y interface{}
	if decodeNumbers(a, &x) != nil || decodeNumbers(b, &y) != nil {
		return false
	}
	return sameValue(x, y)
}

func decodeNumbers(raw []byte, into interface{}) error {
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	return decoder.Decode(into)
}

func sameValue(x, y interface{}) bool {
	switch a := x.(type) {
	case map[string]interface{}:
		b, ok := y.(map[string]interface{})
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			w, present := b[k]
			if !present || !sameValue(v, w) {
				return false
			}
		}
		return true
	case []interface{}:
		b, ok := y.([]interface{})
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameValue(a[i], b[i]) {
				return false
			}
		}
		return true
	case json.Number:
		b, ok := y.(json.Number)
		if !ok {
			return false
		}
		p, _, errP := big.ParseFloat(string(a), 10, 256, big.ToNearestEven)
		q, _, errQ := big.ParseFloat(string(b), 10, 256, big.ToNearestEven)
		return errP == nil && errQ == nil && p.Cmp(q) == 0
	default:
		return x == y
	}
}

func sortedKeys(m map[string]*PublicKey) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
