package politeness

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/events"
)

// A site that redirects to http://user:pass@other/ must not make the crawler send that password
// anywhere: not as Authorization to the other origin, not in the final URL, an event or a cache
// key. The caller's own userinfo is the caller's choice and is sent, but never printed.
func TestRedirectCredentialsAreDropped(t *testing.T) {
	var mu sync.Mutex
	auth := map[string]string{} // path → Authorization received
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth[r.URL.Path] = r.Header.Get("Authorization")
		mu.Unlock()
		w.Header().Set("Cache-Control", "max-age=60")
		io.WriteString(w, "there")
	}))
	defer other.Close()
	otherURL, _ := url.Parse(other.URL)
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth[r.URL.Path] = r.Header.Get("Authorization")
		mu.Unlock()
		if r.URL.Path == "/away" {
			http.Redirect(w, r, "http://mallory:s3cret@"+otherURL.Host+"/there", http.StatusFound)
			return
		}
		io.WriteString(w, "home")
	}))
	defer home.Close()
	store := &keyRecorder{Store: cache.NewMemoryStore(0)}
	var seen []events.Event
	d := testDoor(t, home, func(p *Policy) {
		p.NoCache, p.CacheStore = false, store
		p.Events = &events.Bus{}
		p.Events.Subscribe(func(e events.Event) {
			mu.Lock()
			seen = append(seen, e)
			mu.Unlock()
		})
	})
	resp, err := d.Client().Get(home.URL + "/away")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if got := auth["/there"]; got != "" {
		t.Errorf("the other origin received Authorization %q", got)
	}
	if u := resp.Request.URL; u.User != nil || u.Host != otherURL.Host {
		t.Errorf("final URL %s, want %s/there without userinfo", u.Redacted(), other.URL)
	}

	own := strings.Replace(home.URL, "http://", "http://me:0wn@", 1) + "/own"
	resp, err = d.Client().Get(own)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := auth["/own"]; got != basicAuthorization(url.UserPassword("me", "0wn")) {
		t.Errorf("the caller's own userinfo: Authorization %q, want it sent", got)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, e := range seen {
		if strings.Contains(e.URL+e.Detail, "s3cret") || strings.Contains(e.URL+e.Detail, "0wn") {
			t.Errorf("a password in an event: %+v", e)
		}
	}
	for _, k := range store.keys() {
		if strings.Contains(k, "s3cret") || strings.Contains(k, "mallory") {
			t.Errorf("the redirect's userinfo in a cache key: %q", k)
		}
	}
}

// keyRecorder is a cache store that remembers the keys it was asked to write.
type keyRecorder struct {
	cache.Store
	mu  sync.Mutex
	put []string
}

func (s *keyRecorder) Put(key string, e *cache.Entry) (cache.BodyWriter, error) {
	s.mu.Lock()
	s.put = append(s.put, key)
	s.mu.Unlock()
	return s.Store.Put(key, e)
}

func (s *keyRecorder) keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.put...)
}
