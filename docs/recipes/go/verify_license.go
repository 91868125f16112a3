// Verify a licence payload without the client library: RFC 8785 via github.com/gowebpki/jcs, RSA-SHA256 via crypto/rsa.
//
//	go run -mod=vendor . license.json public.pem
//	go run -mod=vendor . --answer answer.json NONCE LICENSE_KEY FINGERPRINT public.pem
//	go run -mod=vendor . --vectors ../../test-vectors/vectors.json
package main

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/gowebpki/jcs"
)

// verify checks signature over the JCS bytes of license, which must be the raw JSON as received: never
// marshal a Go struct or map here (encoding/json escapes <, >, & and U+2028 and reorders nothing by UTF-16).
func verify(license json.RawMessage, signature string, publicKeyPEM []byte) error {
	canonical, err := jcs.Transform(license)
	if err != nil {
		return err
	}
	block, _ := pem.Decode(publicKeyPEM)
	if block == nil {
		return errors.New("no PEM block")
	}
	parsed, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return err
	}
	key, ok := parsed.(*rsa.PublicKey)
	if !ok || !strings.HasPrefix(signature, "RSA-SHA256:") {
		return errors.New("not an RSA key or not an RSA-SHA256 signature")
	}
	sig, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(signature, "RSA-SHA256:"))
	if err != nil {
		return err
	}
	digest := sha256.Sum256(canonical)
	return rsa.VerifyPKCS1v15(key, crypto.SHA256, digest[:], sig)
}

// verifyValidateAnswer checks a signed /validate answer (sent with nonce): the signed bytes are the JCS form of the
// answer without "signature", taken from the raw JSON as received. Only then are valid and code a verdict.
func verifyValidateAnswer(raw []byte, nonce, licenseKey, fingerprint string, publicKeyPEM []byte) (map[string]json.RawMessage, error) {
	var answer map[string]json.RawMessage
	if err := json.Unmarshal(raw, &answer); err != nil {
		return nil, err
	}
	var signature string
	if err := json.Unmarshal(answer["signature"], &signature); err != nil {
		return nil, errors.New("no signature")
	}
	signed := make(map[string]json.RawMessage, len(answer))
	for name, value := range answer {
		if name != "signature" {
			signed[name] = value
		}
	}
	// Marshalling a map of RawMessage keeps every value's bytes; jcs.Transform then sorts and normalises them.
	unsigned, err := json.Marshal(signed)
	if err != nil {
		return nil, err
	}
	if err := verify(unsigned, signature, publicKeyPEM); err != nil {
		return nil, err
	}
	var subject struct {
		Nonce              string `json:"nonce"`
		LicenseKey         string `json:"license_key"`
		MachineFingerprint string `json:"machine_fingerprint"`
	}
	if err := json.Unmarshal(raw, &subject); err != nil {
		return nil, err
	}
	if subject.Nonce != nonce {
		return nil, errors.New("not the answer to this request (replayed?)")
	}
	if subject.LicenseKey != licenseKey || subject.MachineFingerprint != fingerprint {
		return nil, errors.New("the answer is about another licence or machine")
	}
	return answer, nil
}

func main() {
	if os.Args[1] == "--vectors" {
		var doc struct {
			PublicKeyPEM string `json:"public_key_pem"`
			Vectors      []struct {
				Name         string `json:"name"`
				PayloadJSON  string `json:"payload_json"`
				CanonicalHex string `json:"canonical_hex"`
				Signature    string `json:"signature"`
			} `json:"vectors"`
			ValidateAnswers []struct {
				Name               string `json:"name"`
				Nonce              string `json:"nonce"`
				LicenseKey         string `json:"license_key"`
				MachineFingerprint string `json:"machine_fingerprint"`
				AnswerJSON         string `json:"answer_json"`
			} `json:"validate_answers"`
		}
		raw, _ := os.ReadFile(os.Args[2])
		if err := json.Unmarshal(raw, &doc); err != nil {
			panic(err)
		}
		for _, v := range doc.Vectors {
			canonical, err := jcs.Transform([]byte(v.PayloadJSON))
			if err != nil || hex.EncodeToString(canonical) != v.CanonicalHex {
				panic(v.Name + ": canonical bytes differ")
			}
			if err := verify(json.RawMessage(v.PayloadJSON), v.Signature, []byte(doc.PublicKeyPEM)); err != nil {
				panic(v.Name + ": " + err.Error())
			}
		}
		for _, a := range doc.ValidateAnswers {
			key := []byte(doc.PublicKeyPEM)
			if _, err := verifyValidateAnswer([]byte(a.AnswerJSON), a.Nonce, a.LicenseKey, a.MachineFingerprint, key); err != nil {
				panic(a.Name + ": " + err.Error())
			}
			flipped := strings.NewReplacer(`"valid":true`, `"valid":false`, `"valid":false`, `"valid":true`).Replace(a.AnswerJSON)
			if _, err := verifyValidateAnswer([]byte(flipped), a.Nonce, a.LicenseKey, a.MachineFingerprint, key); err == nil {
				panic(a.Name + ": a changed verdict was accepted")
			}
			if _, err := verifyValidateAnswer([]byte(a.AnswerJSON), "another-nonce-0000", a.LicenseKey, a.MachineFingerprint, key); err == nil {
				panic(a.Name + ": another nonce was accepted")
			}
		}
		fmt.Printf("%d vectors and %d validate answers verified\n", len(doc.Vectors), len(doc.ValidateAnswers))
		return
	}
	if os.Args[1] == "--answer" {
		raw, _ := os.ReadFile(os.Args[2])
		pemBytes, _ := os.ReadFile(os.Args[6])
		answer, err := verifyValidateAnswer(raw, os.Args[3], os.Args[4], os.Args[5], pemBytes)
		if err != nil {
			fmt.Println("invalid:", err)
			os.Exit(1)
		}
		fmt.Println("verified answer, valid:", string(answer["valid"]))
		return
	}
	var document struct {
		License   json.RawMessage `json:"license"`
		Signature string          `json:"signature"`
	}
	raw, _ := os.ReadFile(os.Args[1])
	pemBytes, _ := os.ReadFile(os.Args[2])
	if err := json.Unmarshal(raw, &document); err != nil || verify(document.License, document.Signature, pemBytes) != nil {
		fmt.Println("invalid")
		os.Exit(1)
	}
	fmt.Println("valid")
}
