package webbotauth

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestThumbprint(t *testing.T) {
	// RFC 8037 Appendix A.3: the thumbprint of the Appendix A.2 public key.
	x, _ := base64.RawURLEncoding.DecodeString("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo")
	if got, want := Thumbprint(ed25519.PublicKey(x)), "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"; got != want {
		t.Errorf("RFC 8037 A.3 thumbprint %s, want %s", got, want)
	}
	// The draft's keyid for the RFC 9421 B.1.4 key.
	if got := Thumbprint(testKey(t).Public().(ed25519.PublicKey)); got != testKeyThumbprint {
		t.Errorf("B.1.4 thumbprint %s, want %s", got, testKeyThumbprint)
	}
}

func TestPublicJWKSHasNoPrivateMember(t *testing.T) {
	key := testKey(t)
	data, err := json.Marshal(PublicJWKS(key.Public().(ed25519.PublicKey)))
	if err != nil {
		t.Fatal(err)
	}
	seed := base64.RawURLEncoding.EncodeToString(key.Seed())
	if strings.Contains(string(data), `"d"`) || strings.Contains(string(data), seed) {
		t.Fatalf("the public JWK Set discloses the private key: %s", data)
	}
	set, err := ParseJWKS(data)
	if err != nil {
		t.Fatal(err)
	}
	if pub, tp, ok := set.find(testKeyThumbprint); !ok || tp != testKeyThumbprint || !pub.Equal(key.Public()) {
		t.Fatalf("the parsed set does not find its own key")
	}
}

func TestParseJWKS(t *testing.T) {
	okp := `{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}`
	many := `{"keys":[` + strings.TrimSuffix(strings.Repeat(okp+",", MaxJWKSKeys+1), ",") + `]}`
	cases := []struct {
		name, doc string
		keys      int
		wantErr   bool
	}{
		{"one key", `{"keys":[` + okp + `]}`, 1, false},
		{"an RSA key is kept", `{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"},` + okp + `]}`, 2, false},
		{"empty set", `{"keys":[]}`, 0, false},
		{"private member", `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","d":"n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU"}]}`, 0, true},
		{"no keys member", `{"kty":"OKP"}`, 0, true},
		{"not JSON", `keys`, 0, true},
		{"a key that is not an object", `{"keys":[1]}`, 0, true},
		{"too many keys", many, 0, true},
	}
	for _, c := range cases {
		set, err := ParseJWKS([]byte(c.doc))
		if c.wantErr {
			if !errors.Is(err, ErrBadJWKS) {
				t.Errorf("%s: ParseJWKS = %v, want ErrBadJWKS", c.name, err)
			}
			continue
		}
		if err != nil || len(set.Keys) != c.keys {
			t.Errorf("%s: ParseJWKS = %d keys, %v; want %d", c.name, len(set.Keys), err, c.keys)
		}
	}
}

func TestJWKPublicKey(t *testing.T) {
	good := NewJWK(testKey(t).Public().(ed25519.PublicKey))
	for i, k := range []JWK{
		{Kty: "RSA"},
		{Kty: "OKP", Crv: "X25519", X: good.X},
		{Kty: "OKP", Crv: "Ed25519", X: good.X + "AA"},
		{Kty: "OKP", Crv: "Ed25519", X: "not base64!"},
	} {
		if _, err := k.PublicKey(); err == nil {
			t.Errorf("case %d: %+v gave a public key", i, k)
		}
	}
	if _, err := good.PublicKey(); err != nil {
		t.Error(err)
	}
	if good.Kid != testKeyThumbprint || good.Use != "sig" {
		t.Errorf("NewJWK = %+v", good)
	}
}
