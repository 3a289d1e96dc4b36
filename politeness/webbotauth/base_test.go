package webbotauth

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/dunglas/httpsfv"
)

// testKeyPEM is the Ed25519 test key of RFC 9421 Appendix B.1.4 ("test-key-ed25519"). It is
// public: never use it for anything but tests.
const testKeyPEM = `-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF
-----END PRIVATE KEY-----
`

// testKeyThumbprint is the thumbprint the draft's vectors use as keyid for that key.
const testKeyThumbprint = "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"

func testKey(t testing.TB) ed25519.PrivateKey {
	t.Helper()
	k, err := ParseKey([]byte(testKeyPEM))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// RFC 9421 Appendix B.2.6: the test-request signed with test-key-ed25519.
func TestSignatureBaseRFC9421B26(t *testing.T) {
	req, err := http.NewRequest(http.MethodPost, "http://example.com/foo?param=Value&Pet=dog", strings.NewReader(`{"hello": "world"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Date", "Tue, 20 Apr 2021 02:07:55 GMT")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Digest", "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:")
	req.Header.Set("Content-Length", "18") // as a server sees it; a client sets ContentLength

	input := `sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`
	wantBase := `"date": Tue, 20 Apr 2021 02:07:55 GMT
"@method": POST
"@path": /foo
"@authority": example.com
"content-type": application/json
"content-length": 18
"@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"`
	wantSig := "wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw=="

	dict, err := httpsfv.UnmarshalDictionary([]string{input})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := dict.Get("sig-b26")
	base, err := signatureBase(requestMessage(req), m.(httpsfv.InnerList))
	if err != nil {
		t.Fatal(err)
	}
	if string(base) != wantBase {
		t.Fatalf("signature base:\n%s\nwant:\n%s", base, wantBase)
	}
	key := testKey(t)
	if got := base64.StdEncoding.EncodeToString(ed25519.Sign(key, base)); got != wantSig {
		t.Errorf("signature %s, want %s (Ed25519 is deterministic)", got, wantSig)
	}
	sig, _ := base64.StdEncoding.DecodeString(wantSig)
	if !ed25519.Verify(key.Public().(ed25519.PublicKey), base, sig) {
		t.Error("the published signature does not verify against the base")
	}
}

// The directory draft's signed directory response (possession proof) vector.
func TestDirectoryResponseVector(t *testing.T) {
	const body = `{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","use":"sig"}]}`
	const digest = "sha-256=:CADMT2aBdV/rqQr/NIru64ERQkCobVvllA4V0fLFDu0=:"
	const wantBase = `"@authority";req: signature-agent.test
"content-digest": sha-256=:CADMT2aBdV/rqQr/NIru64ERQkCobVvllA4V0fLFDu0=:
"@signature-params": ("@authority";req "content-digest");created=1735689600;expires=4889289600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";tag="http-message-signatures-directory"`
	const wantSig = "l6P8R67tm3kujAxbHWio7ll01qrEZ0dKD/WWlGhNYEmTnFZM8Wt0VQ9zqGfvo7T/UMkBxsigzChM1Gpz7gOVBg=="

	key := testKey(t)
	d, err := NewDirectory([]ed25519.PrivateKey{key}, DirectoryOptions{ProofValidity: (4889289600 - 1735689600) * 1e9})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(d.JWKS()); got != body {
		t.Fatalf("JWK Set:\n%s\nwant:\n%s", got, body)
	}
	if got := contentDigest(d.JWKS()); got != digest {
		t.Fatalf("Content-Digest %s, want %s", got, digest)
	}
	resp := &message{status: 200, header: http.Header{"Content-Digest": {digest}}, request: &message{authority: "signature-agent.test"}}
	base, err := signatureBase(resp, directoryCovered(testKeyThumbprint, 1735689600, 4889289600))
	if err != nil {
		t.Fatal(err)
	}
	if string(base) != wantBase {
		t.Fatalf("signature base:\n%s\nwant:\n%s", base, wantBase)
	}
	if got := base64.StdEncoding.EncodeToString(ed25519.Sign(key, base)); got != wantSig {
		t.Errorf("signature %s, want %s", got, wantSig)
	}
}

func TestComponentValues(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "https://Example.COM:443/a%20b/c?x=1&y", nil)
	req.Header.Add("X-Multi", " one ")
	req.Header.Add("X-Multi", "two\t")
	req.Header.Set("Signature-Agent", `sig1="https://a.example/dir", other=("x" "y");p=1`)
	m := requestMessage(req)
	cases := []struct {
		id      string
		want    string
		wantErr error
	}{
		{`"@method"`, "GET", nil},
		{`"@authority"`, "example.com", nil},
		{`"@scheme"`, "https", nil},
		{`"@target-uri"`, "https://example.com/a%20b/c?x=1&y", nil},
		{`"@request-target"`, "/a%20b/c?x=1&y", nil},
		{`"@path"`, "/a%20b/c", nil},
		{`"@query"`, "?x=1&y", nil},
		{`"x-multi"`, "one, two", nil},
		{`"signature-agent";key="sig1"`, `"https://a.example/dir"`, nil},
		{`"signature-agent";key="other"`, `("x" "y");p=1`, nil},
		{`"signature-agent";key="nope"`, "", ErrMissingComponent},
		{`"x-absent"`, "", ErrMissingComponent},
		{`"@status"`, "", ErrMissingComponent},
		{`"@authority";req`, "", ErrMalformed},
		{`"x-multi";bs`, "", ErrUnsupported},
		{`"@query-param";name="x"`, "", ErrUnsupported},
		{`"X-Multi"`, "", ErrMalformed},
	}
	for _, c := range cases {
		item, err := httpsfv.UnmarshalItem([]string{c.id})
		if err != nil {
			t.Fatalf("%s: %v", c.id, err)
		}
		got, err := componentValue(m, item)
		if c.wantErr != nil {
			if !errors.Is(err, c.wantErr) {
				t.Errorf("%s: error %v, want %v", c.id, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s = %q, %v; want %q", c.id, got, err, c.want)
		}
	}
}

func TestAuthorityNormalisation(t *testing.T) {
	cases := []struct{ host, scheme, want string }{
		{"Example.org", "https", "example.org"},
		{"example.org:443", "https", "example.org"},
		{"example.org:443", "http", "example.org:443"},
		{"example.org:80", "http", "example.org"},
		{"example.org:8443", "https", "example.org:8443"},
		{"[::1]:443", "https", "[::1]"},
		{"[::1]:8080", "https", "[::1]:8080"},
	}
	for _, c := range cases {
		if got := normalizeAuthority(c.host, c.scheme); got != c.want {
			t.Errorf("normalizeAuthority(%q, %q) = %q, want %q", c.host, c.scheme, got, c.want)
		}
	}
}
