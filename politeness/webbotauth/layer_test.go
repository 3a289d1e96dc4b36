package webbotauth

import (
	"crypto/ed25519"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestLayerSignsEveryHop: a redirect is followed through the layer, and each hop arrives with
// its own signature, which the server verifies against the published key.
func TestLayerSignsEveryHop(t *testing.T) {
	key := testKey(t)
	keys := PublicJWKS(key.Public().(ed25519.PublicKey))
	var mu sync.Mutex
	var nonces []string
	var failures []error
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, err := Verify(r, keys, time.Now())
		mu.Lock()
		nonces = append(nonces, v.Nonce)
		if err != nil {
			failures = append(failures, err)
		}
		mu.Unlock()
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusFound)
		}
	}))
	defer srv.Close()
	s, err := NewSigner(key, SignerOptions{InfoURL: "https://example.org/bot"})
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: Layer(http.DefaultTransport, s)}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/old", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(failures) > 0 {
		t.Fatalf("the server could not verify: %v", failures)
	}
	if len(nonces) != 2 || nonces[0] == nonces[1] {
		t.Fatalf("nonces %q: want two hops, each signed afresh", nonces)
	}
	if req.Header.Get("Signature") != "" {
		t.Error("the layer modified the caller's request")
	}
}

func TestLayerWithoutSignerIsTheNextTransport(t *testing.T) {
	next := http.DefaultTransport
	if Layer(next, nil) != next {
		t.Fatal("Layer(next, nil) should return next: signing is off")
	}
}
