// Verify a licence payload without the client library: RFC 8785 via github.com/gowebpki/jcs, RSA-SHA256 via crypto/rsa.
//
//	go run -mod=vendor . license.json public.pem
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
		fmt.Printf("%d vectors verified\n", len(doc.Vectors))
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
