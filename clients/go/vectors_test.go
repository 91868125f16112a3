package licenceclient

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Test vectors made by the tests: keys, envelopes, licence files, endorsed key lists and a conformance list.

const (
	vNow         = "2026-11-26T08:00:00.000Z"
	vFingerprint = "sha256:abababababababababababababababababababababababababababababababab"
	vOther       = "sha256:cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"
	vLicenseKey  = "POS-AAAAA-BBBBB-CCCCC-DDDDD"
)

type testKey struct {
	rsa    *rsa.PrivateKey
	ed     ed25519.PrivateKey
	public *PublicKey
	KeyID  string
	Alg    string
	legacy string
}

func newTestKey(t testing.TB, algorithm string) *testKey {
	t.Helper()
	k := &testKey{}
	var public crypto.PublicKey
	if algorithm == "RSA-SHA256" {
		private, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		k.rsa, public, k.legacy = private, &private.PublicKey, "RSA-SHA256:"
	} else {
		pub, private, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		k.ed, public, k.legacy = private, pub, "Ed25519:"
	}
	key, err := newPublicKey(public)
	if err != nil {
		t.Fatal(err)
	}
	k.public, k.KeyID, k.Alg = key, key.KeyID, key.Alg()
	return k
}

func (k *testKey) sign(message []byte) []byte {
	if k.rsa != nil {
		sum := sha256.Sum256(message)
		signature, _ := rsa.SignPKCS1v15(rand.Reader, k.rsa, crypto.SHA256, sum[:])
		return signature
	}
	return ed25519.Sign(k.ed, message)
}

func (k *testKey) endorse(other *testKey) map[string]string {
	return map[string]string{"key_id": k.KeyID, "signature": b64urlEncode(k.sign(EndorsementMessage(other.public)))}
}

func (k *testKey) entry(status string, endorsements ...map[string]string) map[string]interface{} {
	if endorsements == nil {
		endorsements = []map[string]string{}
	}
	algorithm := "RSA-SHA256"
	if k.ed != nil {
		algorithm = "Ed25519"
	}
	return map[string]interface{}{"key_id": k.KeyID, "algorithm": algorithm, "status": status, "public_key_pem": k.public.PEM(), "endorsements": endorsements}
}

func (k *testKey) shipped() map[string]string {
	return map[string]string{"key_id": k.KeyID, "public_key_pem": k.public.PEM()}
}

func (k *testKey) envelope(payload []byte, alg string) map[string]string {
	if alg == "" {
		alg = k.Alg
	}
	return map[string]string{"payload": b64urlEncode(payload), "alg": alg, "key_id": k.KeyID, "signature": b64urlEncode(k.sign(payload))}
}

func mustJSON(value interface{}) []byte {
	raw, err := json.Marshal(value)
	if err != nil {
		panic(err)
	}
	return raw
}

func isoAt(offset time.Duration) string {
	t, _ := time.Parse(time.RFC3339Nano, vNow)
	return formatTime(t.Add(offset))
}

func vLicence(k *testKey, overrides map[string]interface{}) map[string]interface{} {
	license := map[string]interface{}{
		"license_key": vLicenseKey, "product": "POS_RETAIL", "license_type": "YEARLY",
		"issued_at": isoAt(-24 * time.Hour), "expires_at": isoAt(364 * day), "activated_at": isoAt(-time.Hour),
		"machine_fingerprint": vFingerprint, "grace_days": 7, "limits": map[string]int{"max_installations": 1},
		"features": []string{"reports", "sync"}, "customer": map[string]interface{}{"name": "Klijent d.o.o.", "email": nil},
		"key_id": k.KeyID, "signed_at": isoAt(-time.Hour),
		"policy": map[string]interface{}{"heartbeat_timeout_seconds": nil, "max_deactivations_per_30_days": nil, "license_file_ttl_days": 30},
	}
	for name, value := range overrides {
		license[name] = value
	}
	return license
}

func vSigned(k *testKey, license map[string]interface{}, alg string) map[string]interface{} {
	payload := mustJSON(license)
	return map[string]interface{}{"license": license, "signature": k.legacy + base64.StdEncoding.EncodeToString(k.sign(payload)), "envelope": k.envelope(payload, alg)}
}

func vFile(k *testKey, overrides map[string]interface{}) string {
	fields := map[string]interface{}{"file_issued_at": isoAt(-time.Minute), "file_expires_at": isoAt(30 * day)}
	for name, value := range overrides {
		fields[name] = value
	}
	return armor("LICENSE FILE", mustJSON(vSigned(k, vLicence(k, fields), "")))
}

func vValidation(k *testKey, nonce string, overrides map[string]interface{}) map[string]interface{} {
	answer := map[string]interface{}{
		"valid": true, "status": "active", "expires_at": isoAt(364 * day), "revoked": false, "grace_ends_at": isoAt(371 * day),
		"code": nil, "nonce": nonce, "license_key": vLicenseKey, "machine_fingerprint": vFingerprint, "checked_at": vNow, "key_id": k.KeyID,
	}
	for name, value := range overrides {
		answer[name] = value
	}
	payload := mustJSON(answer)
	out := map[string]interface{}{"signature": k.legacy + base64.StdEncoding.EncodeToString(k.sign(payload)), "envelope": k.envelope(payload, "")}
	for name, value := range answer {
		out[name] = value
	}
	return out
}

// goConformanceList is this test's own list: every verdict, and every reason a case reaches without stored history.
func goConformanceList(t testing.TB) []byte {
	rsa1, ed, rsa2 := newTestKey(t, "RSA-SHA256"), newTestKey(t, "Ed25519"), newTestKey(t, "RSA-SHA256")
	root, standIn, loopA, loopB := newTestKey(t, "Ed25519"), newTestKey(t, "RSA-SHA256"), newTestKey(t, "RSA-SHA256"), newTestKey(t, "Ed25519")
	edShipped := newTestKey(t, "Ed25519")
	ship := func(keys ...*testKey) []interface{} {
		out := []interface{}{}
		for _, k := range keys {
			out = append(out, k.shipped())
		}
		return out
	}
	published := func(entries ...map[string]interface{}) map[string]interface{} {
		return map[string]interface{}{"keys": entries}
	}
	rotation := published(rsa2.entry("active", ed.endorse(rsa2)), ed.entry("retired", rsa1.endorse(ed)), rsa1.entry("retired"))
	context := map[string]string{"now": vNow, "machine_fingerprint": vFingerprint, "product": "POS_RETAIL"}
	var cases []map[string]interface{}
	add := func(name string, input map[string]interface{}, trust map[string]interface{}, verdict, reason, status string) {
		if trust == nil {
			trust = map[string]interface{}{"shipped_keys": ship(rsa1)}
		}
		expect := map[string]interface{}{"verdict": verdict, "reason": nil}
		if reason != "" {
			expect["reason"] = reason
		}
		if status != "" {
			expect["status"] = status
		}
		cases = append(cases, map[string]interface{}{"name": name, "input": input, "trust": trust, "context": context, "expect": expect})
	}
	file := func(text string) map[string]interface{} {
		return map[string]interface{}{"kind": "license_file", "text": text}
	}
	activation := func(answer interface{}) map[string]interface{} {
		return map[string]interface{}{"kind": "activation", "answer": answer}
	}
	nonce := "go-conformance-nonce-0123456789"
	validation := func(answer interface{}) map[string]interface{} {
		return map[string]interface{}{"kind": "validation", "answer": answer, "nonce": nonce, "license_key": vLicenseKey}
	}
	withShip := func(trust map[string]interface{}) map[string]interface{} {
		trust["shipped_keys"] = ship(rsa1)
		return trust
	}

	add("rsa-file", file(vFile(rsa1, nil)), nil, "accept", "", "active")
	add("grace", activation(vSigned(rsa1, vLicence(rsa1, map[string]interface{}{"expires_at": isoAt(-day)}), "")), nil, "accept", "", "grace")
	add("ed25519-shipped", file(vFile(edShipped, nil)), map[string]interface{}{"shipped_keys": ship(edShipped)}, "accept", "", "active")
	add("rotation-ed25519", file(vFile(ed, nil)), withShip(map[string]interface{}{"published_keys": rotation}), "accept", "", "active")
	add("rotation-rsa-ed25519-rsa", file(vFile(rsa2, nil)), withShip(map[string]interface{}{"published_keys": rotation}), "accept", "", "active")
	add("root-endorsement", file(vFile(rsa2, nil)), withShip(map[string]interface{}{"root_keys": ship(root), "published_keys": published(rsa2.entry("active", root.endorse(rsa2)))}), "accept", "", "active")
	add("validation", validation(vValidation(rsa1, nonce, nil)), nil, "accept", "", "")

	v1 := vSigned(rsa1, vLicence(rsa1, map[string]interface{}{"file_issued_at": isoAt(-time.Minute), "file_expires_at": isoAt(day)}), "")
	delete(v1, "envelope")
	add("v1-file", file(armor("LICENSE FILE", mustJSON(v1))), nil, "refuse", "UNSUPPORTED_FORMAT", "")
	var padded map[string]interface{}
	var envelope map[string]string
	var raw []byte
	for n := 1; len(raw)%3 == 0; n++ {
		// a payload whose length needs padding in base64
		padded = vSigned(rsa1, vLicence(rsa1, map[string]interface{}{"notes": strings.Repeat("x", n)}), "")
		envelope = padded["envelope"].(map[string]string)
		raw, _ = b64urlDecode(envelope["payload"])
	}
	envelope["payload"] = base64.URLEncoding.EncodeToString(raw)
	add("payload-padded", activation(padded), nil, "refuse", "NON_CANONICAL_ENCODING", "")
	add("eddsa-over-rsa", activation(vSigned(rsa1, vLicence(rsa1, nil), "EdDSA")), nil, "refuse", "ALG_MISMATCH", "")
	add("revoked-shipped", file(vFile(rsa1, nil)), withShip(map[string]interface{}{"published_keys": published(rsa2.entry("active", rsa1.endorse(rsa2)), rsa1.entry("revoked"))}), "refuse", "KEY_REVOKED", "")
	add("stand-in", file(vFile(standIn, nil)), withShip(map[string]interface{}{"published_keys": published(standIn.entry("active"))}), "refuse", "UNKNOWN_KEY", "")
	add("endorsement-loop", file(vFile(loopA, nil)), withShip(map[string]interface{}{"published_keys": published(loopA.entry("active", loopB.endorse(loopA)), loopB.entry("retired", loopA.endorse(loopB)))}), "refuse", "UNKNOWN_KEY", "")
	tampered := vSigned(rsa1, vLicence(rsa1, nil), "")
	delete(tampered, "license")
	tampered["envelope"].(map[string]string)["payload"] = b64urlEncode(mustJSON(vLicence(rsa1, map[string]interface{}{"features": []string{"everything"}})))
	add("tampered", activation(tampered), nil, "refuse", "INVALID_SIGNATURE", "")
	disagree := vSigned(rsa1, vLicence(rsa1, nil), "")
	disagree["license"] = vLicence(rsa1, map[string]interface{}{"features": []string{"everything"}})
	add("license-disagrees", activation(disagree), nil, "refuse", "PAYLOAD_MISMATCH", "")
	add("other-machine", file(vFile(rsa1, map[string]interface{}{"machine_fingerprint": vOther})), nil, "refuse", "FINGERPRINT_MISMATCH", "")
	add("other-product", activation(vSigned(rsa1, vLicence(rsa1, map[string]interface{}{"product": "POS_CLOUD"}), "")), nil, "refuse", "PRODUCT_MISMATCH", "")
	add("clock-behind", activation(vSigned(rsa1, vLicence(rsa1, map[string]interface{}{"signed_at": isoAt(day)}), "")), nil, "refuse", "CLOCK_TAMPERED", "")
	add("file-expired", file(vFile(rsa1, map[string]interface{}{"file_expires_at": isoAt(-time.Minute)})), nil, "refuse", "FILE_EXPIRED", "")
	add("expired", activation(vSigned(rsa1, vLicence(rsa1, map[string]interface{}{"expires_at": isoAt(-8 * day)}), "")), nil, "refuse", "EXPIRED", "")
	add("replayed", validation(vValidation(rsa1, "another-nonce-0123456789", nil)), nil, "refuse", "NONCE_MISMATCH", "")
	add("wrong-subject", validation(vValidation(rsa1, nonce, map[string]interface{}{"machine_fingerprint": vOther})), nil, "refuse", "WRONG_SUBJECT", "")
	return mustJSON(map[string]interface{}{"format": "licence-server-conformance-v1", "cases": cases})
}
