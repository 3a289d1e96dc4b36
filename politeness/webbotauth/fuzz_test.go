package webbotauth

import (
	"crypto/ed25519"
	"errors"
	"net/http"
	"testing"
	"time"
)

// FuzzVerify: whatever Signature-Agent, Signature-Input and Signature a request carries, Verify
// never panics, every failure is one of the package's typed errors, and a success names a key
// of the set and an https directory.
func FuzzVerify(f *testing.F) {
	seeds := [][3]string{
		{`agent2="https://signature-agent.test"`,
			`sig2=("@authority" "signature-agent";key="agent2");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==";tag="web-bot-auth"`,
			`sig2=:RdNFx5Bj6au3YgAMQL/RzmUlZE8QZLIaXGRpw985hWnwPfMxT228NMk6ehRS1PSl4e8PhbNZACSanGdhEwYCCg==:`},
		{`"https://signature-agent.test"`,
			`sig2=("@authority" "signature-agent");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=1735693200;nonce="e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg==";tag="web-bot-auth"`,
			`sig2=:jdq0SqOwHdyHr9+r5jw3iYZH6aNGKijYp/EstF4RQTQdi5N5YYKrD+mCT1HA1nZDsi6nJKuHxUi/5Syp3rLWBA==:`},
		{`sig1="https://a.example/"`, `sig1=("@method" "@path" "@query" "@target-uri" "@request-target" "@scheme" "@status" "x";key="a" "y";req "z";bs);created=1;expires=2;keyid="k";tag="web-bot-auth"`, `sig1=:AAAA:`},
		{`sig1=("a" "b")`, `sig1=();tag="web-bot-auth";created=-1;expires=9999999999999;keyid="x"`, `sig1=?1`},
		{"", `a=1, b=(1 2);tag="web-bot-auth"`, `a=:Zm9v:`},
		{`a`, `sig1=("@authority" "@authority");created=1;expires=1;keyid="";tag="web-bot-auth"`, `sig1`},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], int64(1735690000))
	}
	keys := PublicJWKS(testKey(f).Public().(ed25519.PublicKey))
	typed := []error{ErrNoSignature, ErrWrongTag, ErrExpired, ErrNotYetValid, ErrUnknownKey, ErrBadSignature,
		ErrMissingComponent, ErrUnsupported, ErrMalformed}
	f.Fuzz(func(t *testing.T, agent, input, sig string, now int64) {
		req, _ := http.NewRequest(http.MethodPost, "http://example.com/foo?param=Value&Pet=dog", nil)
		req.Header.Set("Signature-Agent", agent)
		req.Header.Set("Signature-Input", input)
		req.Header.Set("Signature", sig)
		v, err := Verify(req, keys, time.Unix(now, 0))
		if err == nil {
			if v.KeyID != testKeyThumbprint || v.Agent == "" {
				t.Fatalf("verified %+v", v)
			}
			return
		}
		for _, e := range typed {
			if errors.Is(err, e) {
				return
			}
		}
		t.Fatalf("Verify returned an untyped error: %v", err)
	})
}

// FuzzParseJWKS: ParseJWKS never panics, and what it accepts is bounded and has no private key.
func FuzzParseJWKS(f *testing.F) {
	f.Add([]byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","use":"sig"}]}`))
	f.Add([]byte(`{"keys":[{"kty":"OKP","d":"x"}]}`))
	f.Add([]byte(`{"keys":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := ParseJWKS(data)
		if err != nil {
			if !errors.Is(err, ErrBadJWKS) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if len(set.Keys) > MaxJWKSKeys {
			t.Fatalf("%d keys accepted", len(set.Keys))
		}
		for _, k := range set.Keys {
			_, _ = k.PublicKey()
		}
	})
}

// FuzzParseKey: ParseKey never panics and returns either a whole Ed25519 key or a typed error.
func FuzzParseKey(f *testing.F) {
	f.Add([]byte(testKeyPEM))
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"))
	f.Add([]byte("-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		key, err := ParseKey(data)
		if err != nil {
			if !errors.Is(err, ErrNotPKCS8PEM) && !errors.Is(err, ErrNotEd25519) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if len(key) != ed25519.PrivateKeySize {
			t.Fatalf("a %d-byte key", len(key))
		}
	})
}
