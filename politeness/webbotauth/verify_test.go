package webbotauth

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// draftRequest is the draft's test-request (RFC 9421 Appendix B.2) with a vector's three fields.
func draftRequest(t *testing.T, agent, input, sig string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://example.com/foo?param=Value&Pet=dog", strings.NewReader(`{"hello": "world"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Date", "Tue, 20 Apr 2021 02:07:55 GMT")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Signature-Agent", agent)
	req.Header.Set("Signature-Input", input)
	req.Header.Set("Signature", sig)
	return req
}

// The draft's Ed25519 examples (draft-ietf-webbotauth-httpsig-protocol, Test Vectors, "EdDSA
// Using Curve edwards25519"): the Dictionary form, whose member key (agent2) differs from the
// label (sig2), and the legacy bare-String form, which expired long ago.
func TestVerifyDraftVectors(t *testing.T) {
	keys := PublicJWKS(testKey(t).Public().(ed25519.PublicKey))
	created := time.Unix(1735689600, 0)
	cases := []struct {
		name, agent, input, sig string
		host                    string // sent to this authority instead of example.com
		now                     time.Time
		wantErr                 error
	}{
		{
			name:  "E.2.1 dictionary, member key differs from the label",
			agent: `agent2="https://signature-agent.test"`,
			input: `sig2=("@authority" "signature-agent";key="agent2");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==";tag="web-bot-auth"`,
			sig:   `sig2=:RdNFx5Bj6au3YgAMQL/RzmUlZE8QZLIaXGRpw985hWnwPfMxT228NMk6ehRS1PSl4e8PhbNZACSanGdhEwYCCg==:`,
			now:   created.Add(time.Hour),
		},
		{
			name:  "E.2.2 legacy bare string, inside its hour",
			agent: `"https://signature-agent.test"`,
			input: `sig2=("@authority" "signature-agent");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=1735693200;nonce="e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg==";tag="web-bot-auth"`,
			sig:   `sig2=:jdq0SqOwHdyHr9+r5jw3iYZH6aNGKijYp/EstF4RQTQdi5N5YYKrD+mCT1HA1nZDsi6nJKuHxUi/5Syp3rLWBA==:`,
			now:   created.Add(30 * time.Minute),
		},
		{
			name:    "E.2.2 legacy bare string, today",
			agent:   `"https://signature-agent.test"`,
			input:   `sig2=("@authority" "signature-agent");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=1735693200;nonce="e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg==";tag="web-bot-auth"`,
			sig:     `sig2=:jdq0SqOwHdyHr9+r5jw3iYZH6aNGKijYp/EstF4RQTQdi5N5YYKrD+mCT1HA1nZDsi6nJKuHxUi/5Syp3rLWBA==:`,
			now:     time.Now(),
			wantErr: ErrExpired,
		},
		{
			name:    "E.2.1 replayed to another authority",
			agent:   `agent2="https://signature-agent.test"`,
			input:   `sig2=("@authority" "signature-agent";key="agent2");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==";tag="web-bot-auth"`,
			sig:     `sig2=:RdNFx5Bj6au3YgAMQL/RzmUlZE8QZLIaXGRpw985hWnwPfMxT228NMk6ehRS1PSl4e8PhbNZACSanGdhEwYCCg==:`,
			host:    "other.example",
			now:     created.Add(time.Hour),
			wantErr: ErrBadSignature,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := draftRequest(t, c.agent, c.input, c.sig)
			if c.host != "" {
				req.Host = c.host
			}
			v, err := Verify(req, keys, c.now)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("Verify = %v, want %v", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := Verification{Label: "sig2", KeyID: testKeyThumbprint, Agent: "https://signature-agent.test",
				Created: created, Expires: v.Expires, Nonce: v.Nonce}
			if v != want || v.Nonce == "" {
				t.Errorf("Verify = %+v, want %+v", v, want)
			}
		})
	}
}

// fixedSigner signs at now with a nonce of zero bytes, pointing at the example directory.
func fixedSigner(t *testing.T, key ed25519.PrivateKey, now time.Time) *Signer {
	t.Helper()
	s, err := NewSigner(key, SignerOptions{InfoURL: "https://example.org/bot", Now: func() time.Time { return now },
		Rand: bytes.NewReader(make([]byte, 1<<16))})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSignThenVerify(t *testing.T) {
	key := testKey(t)
	now := time.Unix(1_800_000_000, 0)
	keys := PublicJWKS(key.Public().(ed25519.PublicKey))
	other, _ := GenerateKey()

	signed := func(t *testing.T) *http.Request {
		req, _ := http.NewRequest(http.MethodGet, "https://site.example/page?q=1", nil)
		if err := fixedSigner(t, key, now).Sign(req); err != nil {
			t.Fatal(err)
		}
		return req
	}

	t.Run("the fields are the draft's", func(t *testing.T) {
		req := signed(t)
		if got, want := req.Header.Get("Signature-Agent"), `sig1="https://example.org/.well-known/http-message-signatures-directory"`; got != want {
			t.Errorf("Signature-Agent %s, want %s", got, want)
		}
		input := regexp.MustCompile(`^sig1=\("@method" "@authority" "@path" "signature-agent";key="sig1"\);created=1800000000;expires=1800000300;keyid="` +
			testKeyThumbprint + `";alg="ed25519";nonce="([A-Za-z0-9_-]{86})";tag="web-bot-auth"$`)
		if !input.MatchString(req.Header.Get("Signature-Input")) {
			t.Errorf("Signature-Input %s does not match %s", req.Header.Get("Signature-Input"), input)
		}
		if !regexp.MustCompile(`^sig1=:[A-Za-z0-9+/]{86}==:$`).MatchString(req.Header.Get("Signature")) {
			t.Errorf("Signature %s is not one 64-byte byte sequence", req.Header.Get("Signature"))
		}
	})

	cases := []struct {
		name    string
		tamper  func(*http.Request)
		keys    *JWKS // nil: the signing key's set
		now     time.Time
		wantErr error
	}{
		{name: "untouched", now: now},
		{name: "verified up to its expiry", now: now.Add(DefaultExpiry)},
		{name: "created a little ahead of the verifier's clock", now: now.Add(-30 * time.Second)},
		{name: "tampered authority", tamper: func(r *http.Request) { r.Host = "evil.example" }, now: now, wantErr: ErrBadSignature},
		{name: "tampered path", tamper: func(r *http.Request) { r.URL.Path = "/other" }, now: now, wantErr: ErrBadSignature},
		{name: "tampered method", tamper: func(r *http.Request) { r.Method = http.MethodDelete }, now: now, wantErr: ErrBadSignature},
		{name: "directory swapped", tamper: func(r *http.Request) {
			r.Header.Set("Signature-Agent", `sig1="https://evil.example/.well-known/http-message-signatures-directory"`)
		}, now: now, wantErr: ErrBadSignature},
		{name: "expired", now: now.Add(DefaultExpiry + time.Second), wantErr: ErrExpired},
		{name: "created in the future", now: now.Add(-2 * MaxClockSkew), wantErr: ErrNotYetValid},
		{name: "unknown key", keys: &JWKS{Keys: []JWK{NewJWK(other.Public().(ed25519.PublicKey))}}, now: now, wantErr: ErrUnknownKey},
		{name: "empty key set", keys: &JWKS{}, now: now, wantErr: ErrUnknownKey},
		{name: "wrong tag", tamper: func(r *http.Request) {
			r.Header.Set("Signature-Input", strings.Replace(r.Header.Get("Signature-Input"), `tag="web-bot-auth"`, `tag="other"`, 1))
		}, now: now, wantErr: ErrWrongTag},
		{name: "no Signature-Agent", tamper: func(r *http.Request) { r.Header.Del("Signature-Agent") }, now: now, wantErr: ErrMissingComponent},
		{name: "no Signature", tamper: func(r *http.Request) { r.Header.Del("Signature") }, now: now, wantErr: ErrNoSignature},
		{name: "signature under another label", tamper: func(r *http.Request) {
			r.Header.Set("Signature", strings.Replace(r.Header.Get("Signature"), "sig1=", "sig9=", 1))
		}, now: now, wantErr: ErrNoSignature},
		{name: "authority not covered", tamper: func(r *http.Request) {
			r.Header.Set("Signature-Input", strings.Replace(r.Header.Get("Signature-Input"), `"@authority" `, "", 1))
		}, now: now, wantErr: ErrMissingComponent},
		{name: "another algorithm", tamper: func(r *http.Request) {
			r.Header.Set("Signature-Input", strings.Replace(r.Header.Get("Signature-Input"), `alg="ed25519"`, `alg="rsa-pss-sha512"`, 1))
		}, now: now, wantErr: ErrUnsupported},
		{name: "http directory", tamper: func(r *http.Request) {
			r.Header.Set("Signature-Agent", `sig1="http://example.org/.well-known/http-message-signatures-directory"`)
		}, now: now, wantErr: ErrMalformed},
		{name: "garbage Signature-Input", tamper: func(r *http.Request) { r.Header.Set("Signature-Input", "sig1=(((") }, now: now, wantErr: ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := signed(t)
			if c.tamper != nil {
				c.tamper(req)
			}
			k := keys
			if c.keys != nil {
				k = *c.keys
			}
			v, err := Verify(req, k, c.now)
			if c.wantErr == nil {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if v.Label != Label || v.KeyID != testKeyThumbprint || v.Agent != "https://example.org/.well-known/http-message-signatures-directory" ||
					!v.Created.Equal(now) || v.Expires.Sub(v.Created) != DefaultExpiry {
					t.Errorf("Verify = %+v", v)
				}
				return
			}
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("Verify = %v, want %v", err, c.wantErr)
			}
		})
	}
}

func TestEverySignatureHasItsOwnNonce(t *testing.T) {
	s, err := NewSigner(testKey(t), SignerOptions{InfoURL: "https://example.org/bot"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 20 {
		req, _ := http.NewRequest(http.MethodGet, "https://site.example/", nil)
		if err := s.Sign(req); err != nil {
			t.Fatal(err)
		}
		in := req.Header.Get("Signature-Input")
		if seen[in] {
			t.Fatalf("Signature-Input repeated: %s", in)
		}
		seen[in] = true
	}
}

func TestNewSignerRefuses(t *testing.T) {
	key := testKey(t)
	cases := []struct {
		name    string
		key     ed25519.PrivateKey
		opts    SignerOptions
		wantErr error
		agent   string
	}{
		{name: "agent from the info URL", opts: SignerOptions{InfoURL: "https://example.org:8443/about/bot"},
			agent: "https://example.org:8443/.well-known/http-message-signatures-directory"},
		{name: "explicit agent wins", opts: SignerOptions{InfoURL: "http://example.org/bot", Agent: "https://keys.example/jwks.json"},
			agent: "https://keys.example/jwks.json"},
		{name: "http info URL and no agent", opts: SignerOptions{InfoURL: "http://example.org/bot"}, wantErr: ErrAgentNotHTTPS},
		{name: "no info URL and no agent", opts: SignerOptions{}, wantErr: ErrAgentNotHTTPS},
		{name: "http agent", opts: SignerOptions{Agent: "http://keys.example/"}, wantErr: ErrAgentNotHTTPS},
		{name: "relative agent", opts: SignerOptions{Agent: "/.well-known/http-message-signatures-directory"}, wantErr: ErrAgentNotHTTPS},
		{name: "expiry above 24 h", opts: SignerOptions{InfoURL: "https://example.org/", Expiry: 25 * time.Hour}, wantErr: ErrBadExpiry},
		{name: "negative expiry", opts: SignerOptions{InfoURL: "https://example.org/", Expiry: -time.Minute}, wantErr: ErrBadExpiry},
		{name: "24 h expiry", opts: SignerOptions{InfoURL: "https://example.org/", Expiry: 24 * time.Hour},
			agent: "https://example.org/.well-known/http-message-signatures-directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := key
			if c.key != nil {
				k = c.key
			}
			s, err := NewSigner(k, c.opts)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("NewSigner = %v, want %v", err, c.wantErr)
				}
				return
			}
			if err != nil || s.Agent() != c.agent {
				t.Fatalf("NewSigner = %v, %v; want agent %s", s, err, c.agent)
			}
		})
	}
	if _, err := NewSigner(key[:32], SignerOptions{InfoURL: "https://example.org/"}); err == nil {
		t.Error("NewSigner accepted a 32-byte seed as a private key")
	}
}
