package webbotauth

import (
	"crypto/ed25519"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
)

// checkDirectoryProofs verifies every possession proof of a directory response served for
// authority at now, with the keys of the body itself, and returns the keyids that verified.
func checkDirectoryProofs(t *testing.T, h http.Header, body []byte, authority string, now time.Time) []string {
	t.Helper()
	if got := h.Get("Content-Digest"); got != contentDigest(body) {
		t.Fatalf("Content-Digest %s does not match the body (%s)", got, contentDigest(body))
	}
	set, err := ParseJWKS(body)
	if err != nil {
		t.Fatal(err)
	}
	inputs, err := httpsfv.UnmarshalDictionary(h.Values("Signature-Input"))
	if err != nil {
		t.Fatal(err)
	}
	sigs, err := httpsfv.UnmarshalDictionary(h.Values("Signature"))
	if err != nil {
		t.Fatal(err)
	}
	resp := &message{status: http.StatusOK, header: h, request: &message{authority: authority}}
	var verified []string
	for _, label := range inputs.Names() {
		m, _ := inputs.Get(label)
		covered := m.(httpsfv.InnerList)
		if tag, _ := covered.Params.Get("tag"); tag != DirectoryTag {
			t.Errorf("%s: tag %v", label, tag)
		}
		created, _ := intParam(covered.Params, "created")
		expires, _ := intParam(covered.Params, "expires")
		if time.Unix(created, 0).After(now) || !time.Unix(expires, 0).After(now) {
			t.Errorf("%s: not valid at %s (created %d, expires %d)", label, now, created, expires)
		}
		keyid, _ := stringParam(covered.Params, "keyid")
		pub, _, ok := set.find(keyid)
		if !ok {
			t.Fatalf("%s: keyid %s is not in the directory", label, keyid)
		}
		s, _ := sigs.Get(label)
		base, err := signatureBase(resp, covered)
		if err != nil {
			t.Fatal(err)
		}
		if !ed25519.Verify(pub, base, s.(httpsfv.Item).Value.([]byte)) {
			t.Errorf("%s: the possession proof of %s does not verify for %s", label, keyid, authority)
			continue
		}
		verified = append(verified, keyid)
	}
	return verified
}

func TestDirectoryHandler(t *testing.T) {
	k1 := testKey(t)
	k2, _ := GenerateKey()
	now := time.Unix(1_800_000_000, 0)
	d, err := NewDirectory([]ed25519.PrivateKey{k1, k2}, DirectoryOptions{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	defer srv.Close()

	resp, err := http.Get(srv.URL + WellKnownPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != DirectoryMediaType || resp.Header.Get("Cache-Control") != "max-age=86400" {
		t.Fatalf("GET: %d, Content-Type %q, Cache-Control %q", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"))
	}
	if strings.Contains(string(body), `"d"`) {
		t.Fatalf("the directory discloses a private key: %s", body)
	}
	authority := strings.TrimPrefix(srv.URL, "http://")
	got := checkDirectoryProofs(t, resp.Header, body, authority, now)
	want := []string{Thumbprint(k1.Public().(ed25519.PublicKey)), Thumbprint(k2.Public().(ed25519.PublicKey))}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("verified proofs %v, want one per key %v", got, want)
	}

	// The proof is bound to the authority it was served for: copied elsewhere, it fails.
	resp2 := &message{status: 200, header: resp.Header, request: &message{authority: "mirror.example"}}
	inputs, _ := httpsfv.UnmarshalDictionary(resp.Header.Values("Signature-Input"))
	m, _ := inputs.Get("binding1")
	base, _ := signatureBase(resp2, m.(httpsfv.InnerList))
	sigs, _ := httpsfv.UnmarshalDictionary(resp.Header.Values("Signature"))
	s, _ := sigs.Get("binding1")
	if ed25519.Verify(k1.Public().(ed25519.PublicKey), base, s.(httpsfv.Item).Value.([]byte)) {
		t.Error("a possession proof verified for another authority")
	}

	head, err := http.Head(srv.URL + WellKnownPath)
	if err != nil {
		t.Fatal(err)
	}
	head.Body.Close()
	if head.StatusCode != 200 || head.Header.Get("Signature") == "" {
		t.Errorf("HEAD: %d, Signature %q", head.StatusCode, head.Header.Get("Signature"))
	}
	post, err := http.Post(srv.URL+WellKnownPath, "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	post.Body.Close()
	if post.StatusCode != http.StatusMethodNotAllowed || post.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d, Allow %q", post.StatusCode, post.Header.Get("Allow"))
	}
}

func TestDirectoryResponseForStaticHosting(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	d, err := NewDirectory([]ed25519.PrivateKey{testKey(t)}, DirectoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	body, h, err := d.Response("Example.ORG:443", now)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Content-Type", "Cache-Control", "Content-Digest", "Signature-Input", "Signature"} {
		if h.Get(name) == "" {
			t.Errorf("no %s", name)
		}
	}
	if got := checkDirectoryProofs(t, h, body, "example.org", now.Add(DefaultProofValidity-time.Second)); len(got) != 1 {
		t.Fatalf("verified %v", got)
	}
	if _, err := NewDirectory(nil, DirectoryOptions{}); err == nil {
		t.Error("NewDirectory accepted no keys")
	}
}
