// Verify a signed envelope without the client library: decode, verify, parse (standard library only).
//
//	go run . envelope.json public.pem    # {"payload", "alg", "key_id", "signature"}
//	go run . --vectors ../../test-vectors/vectors.json
package main

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
)

type Envelope struct {
	Payload   string `json:"payload"`
	Alg       string `json:"alg"`
	KeyID     string `json:"key_id"`
	Signature string `json:"signature"`
}

// b64url accepts unpadded base64url only (padding, the standard alphabet or another spelling is refused).
func b64url(text string) ([]byte, error) {
	raw, err := base64.RawURLEncoding.Strict().DecodeString(text)
	if err != nil || base64.RawURLEncoding.EncodeToString(raw) != text {
		return nil, errors.New("not unpadded base64url")
	}
	return raw, nil
}

// OpenEnvelope returns the payload bytes (JSON) once the key signed them; parse them only after this.
func OpenEnvelope(e Envelope, publicKeyPEM []byte) ([]byte, error) {
	payload, err1 := b64url(e.Payload) // 1. decode
	signature, err2 := b64url(e.Signature)
	if err1 != nil || err2 != nil {
		return nil, errors.New("payload and signature must be unpadded base64url")
	}
	block, _ := pem.Decode(publicKeyPEM)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	switch k := key.(type) { // 2. verify the bytes as they are: the alg must be the key's
	case *rsa.PublicKey:
		digest := sha256.Sum256(payload)
		if e.Alg != "RS256" || rsa.VerifyPKCS1v15(k, crypto.SHA256, digest[:], signature) != nil {
			return nil, errors.New("not an RS256 signature by this key")
		}
	case ed25519.PublicKey:
		if e.Alg != "EdDSA" || !ed25519.Verify(k, payload, signature) {
			return nil, errors.New("not an EdDSA signature by this key")
		}
	default:
		return nil, errors.New("neither an RSA nor an Ed25519 key")
	}
	return payload, nil
}

// 3. Parse: var license struct{ LicenseKey string `json:"license_key"`; ... }; json.Unmarshal(payload, &license).
// Then check machine_fingerprint, product, expires_at + grace_days, file_expires_at; for a signed validate
// answer, that nonce, license_key and machine_fingerprint are those you sent.

func main() {
	if len(os.Args) == 3 && os.Args[1] == "--vectors" {
		if err := vectors(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	var e Envelope
	raw, _ := os.ReadFile(os.Args[1])
	pemBytes, _ := os.ReadFile(os.Args[2])
	if err := json.Unmarshal(raw, &e); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	payload, err := OpenEnvelope(e, pemBytes)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var license map[string]interface{}
	if err := json.Unmarshal(payload, &license); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(license["license_key"], license["expires_at"])
}

func vectors(path string) error {
	var doc struct {
		KeyID        string `json:"key_id"`
		PublicKeyPEM string `json:"public_key_pem"`
		Ed25519      struct {
			KeyID        string `json:"key_id"`
			PublicKeyPEM string `json:"public_key_pem"`
		} `json:"ed25519"`
		Envelopes []struct {
			Name        string   `json:"name"`
			PayloadJSON string   `json:"payload_json"`
			Envelope    Envelope `json:"envelope"`
		} `json:"envelopes"`
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return err
	}
	keys := map[string][]byte{doc.KeyID: []byte(doc.PublicKeyPEM), doc.Ed25519.KeyID: []byte(doc.Ed25519.PublicKeyPEM)}
	for _, v := range doc.Envelopes {
		e := v.Envelope
		payload, err := OpenEnvelope(e, keys[e.KeyID])
		if err != nil {
			return fmt.Errorf("%s: %v", v.Name, err)
		}
		var got, want interface{}
		if json.Unmarshal(payload, &got) != nil || json.Unmarshal([]byte(v.PayloadJSON), &want) != nil || !sameJSON(got, want) {
			return fmt.Errorf("%s: the payload is not the licence", v.Name)
		}
		padded, truncated, swapped := e, e, e
		padded.Payload += "="
		truncated.Payload = e.Payload[:len(e.Payload)-2]
		swapped.Alg = map[string]string{"RS256": "EdDSA", "EdDSA": "RS256"}[e.Alg]
		for _, bad := range []Envelope{padded, truncated, swapped} {
			if _, err := OpenEnvelope(bad, keys[e.KeyID]); err == nil {
				return fmt.Errorf("%s: a damaged envelope verified", v.Name)
			}
		}
	}
	fmt.Printf("%d envelopes verified, damaged ones refused\n", len(doc.Envelopes))
	return nil
}

func sameJSON(a, b interface{}) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
