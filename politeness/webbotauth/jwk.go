package webbotauth

// This file decides how a public key is written down and named: the Ed25519 JWK (RFC 8037), its
// thumbprint (RFC 7638), which is the keyid of every signature, and the JWK Set a directory serves.

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// MaxJWKSKeys bounds the keys [ParseJWKS] accepts: a directory with more is refused rather than
// searched key by key (the draft's SSRF considerations ask verifiers for a key-count limit).
const MaxJWKSKeys = 64

// ErrBadJWKS is wrapped by every error of [ParseJWKS]: the document is not a usable JWK Set.
var ErrBadJWKS = errors.New("not a usable JWK Set")

// JWK is one public key as a JSON Web Key (RFC 7517). For Ed25519, kty is "OKP", crv "Ed25519"
// and x the 32-byte public key in base64url without padding (RFC 8037 §2). It has no field for
// the private member d, so a JWK can never disclose a private key.
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv,omitempty"`
	Kid string `json:"kid,omitempty"`
	X   string `json:"x,omitempty"`
	Use string `json:"use,omitempty"`
}

// JWKS is a JWK Set (RFC 7517 §5): what a key directory serves.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// NewJWK returns the public JWK of pub with kid set to its thumbprint and use "sig", as the
// directory draft asks for a directory at the well-known URI.
func NewJWK(pub ed25519.PublicKey) JWK {
	return JWK{Kty: "OKP", Crv: "Ed25519", Kid: Thumbprint(pub), X: b64(pub), Use: "sig"}
}

// PublicJWKS returns the JWK Set of the public halves of keys, in order.
func PublicJWKS(keys ...ed25519.PublicKey) JWKS {
	set := JWKS{Keys: make([]JWK, 0, len(keys))}
	for _, k := range keys {
		set.Keys = append(set.Keys, NewJWK(k))
	}
	return set
}

// Thumbprint is the RFC 7638 JWK SHA-256 thumbprint of an Ed25519 public key in base64url: the
// SHA-256 of the required members in lexicographic order with no whitespace,
// {"crv":"Ed25519","kty":"OKP","x":"…"} (RFC 8037 Appendix A.3). It is the keyid of every
// signature made with the key.
func Thumbprint(pub ed25519.PublicKey) string {
	// Written by hand: encoding/json would escape nothing here, but RFC 7638 §3.3 fixes the exact
	// bytes, and x is base64url, which needs no escaping.
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + b64(pub) + `"}`))
	return b64(sum[:])
}

// PublicKey returns the Ed25519 key k describes. It fails for another key type or curve, and
// when x is not 32 bytes of base64url.
func (k JWK) PublicKey() (ed25519.PublicKey, error) {
	if k.Kty != "OKP" || k.Crv != "Ed25519" {
		return nil, fmt.Errorf("key %q is kty %q crv %q, not an Ed25519 key (kty OKP, crv Ed25519)", k.Kid, k.Kty, k.Crv)
	}
	x, err := base64.RawURLEncoding.DecodeString(k.X)
	if err != nil || len(x) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("key %q: x is not %d bytes of base64url without padding", k.Kid, ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(x), nil
}

// ParseJWKS reads a JWK Set. It refuses a document that is not one, one with more than
// [MaxJWKSKeys] keys, and one that contains a private member ("d"): a directory that publishes
// a private key must be fixed, not used. Keys of other types are kept; [Verify] skips them.
// Every error wraps [ErrBadJWKS].
func ParseJWKS(data []byte) (JWKS, error) {
	var raw struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return JWKS{}, fmt.Errorf("%w: %v", ErrBadJWKS, err)
	}
	if raw.Keys == nil {
		return JWKS{}, fmt.Errorf("%w: no \"keys\" array", ErrBadJWKS)
	}
	if len(raw.Keys) > MaxJWKSKeys {
		return JWKS{}, fmt.Errorf("%w: %d keys, more than the %d accepted", ErrBadJWKS, len(raw.Keys), MaxJWKSKeys)
	}
	set := JWKS{Keys: make([]JWK, 0, len(raw.Keys))}
	for i, r := range raw.Keys {
		var k struct {
			JWK
			D *json.RawMessage `json:"d"`
		}
		dec := json.NewDecoder(bytes.NewReader(r))
		if err := dec.Decode(&k); err != nil {
			return JWKS{}, fmt.Errorf("%w: key %d: %v", ErrBadJWKS, i, err)
		}
		if k.D != nil {
			return JWKS{}, fmt.Errorf("%w: key %d (%q) contains the private member \"d\"; remove the key from the directory and replace it", ErrBadJWKS, i, k.Kid)
		}
		set.Keys = append(set.Keys, k.JWK)
	}
	return set, nil
}

// find returns the Ed25519 key of set that keyid names — by its thumbprint, or by a kid equal
// to keyid — and that key's thumbprint.
func (set JWKS) find(keyid string) (ed25519.PublicKey, string, bool) {
	for _, k := range set.Keys {
		pub, err := k.PublicKey()
		if err != nil {
			continue
		}
		if tp := Thumbprint(pub); tp == keyid || k.Kid == keyid {
			return pub, tp, true
		}
	}
	return nil, "", false
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
