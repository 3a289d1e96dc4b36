package cache_test

import (
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// TestVaryCookieNeverReachesTheStore: a response that varies on Cookie would be keyed by the
// session cookie's value (the cache sits below the door's cookie layer), so it is not stored at
// all — no file, no key, no vary record holds the value.
func TestVaryCookieNeverReachesTheStore(t *testing.T) {
	const secret = "s3ssion-v4lue"
	for _, field := range []string{"Cookie", "cookie, Accept-Language", "Authorization"} {
		t.Run(field, func(t *testing.T) {
			c := newClock()
			srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
				w.Header().Set("Cache-Control", "max-age=3600")
				w.Header().Set("Vary", field)
				return "page for this session"
			})
			dir := t.TempDir()
			tr := cache.New(http.DefaultTransport, newDisk(t, dir, 0), cache.Options{Now: c.Now})
			hdr := []string{"Cookie", "PHPSESSID=" + secret, "Authorization", "Bearer " + secret, "Accept-Language", "en"}
			for i := range 2 {
				if r := get(t, tr, srv.URL+"/account", hdr...); r.status != cache.Miss {
					t.Errorf("read %d = %q, want miss: a response varying on %s is not stored", i+1, r.status, field)
				}
			}
			_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				if b, _ := os.ReadFile(p); strings.Contains(string(b), secret) {
					t.Errorf("%s holds the credential's value", p)
				}
				return nil
			})
		})
	}
}

// TestStoredRobotsTxtIsReusedForAtMostADay pins RFC 9309 §2.4 on the cache: a robots.txt whose
// response allows a year of freshness is still not used for more than 24 hours, also by a later
// process reading the same disk store, unless the origin cannot be reached.
func TestStoredRobotsTxtIsReusedForAtMostADay(t *testing.T) {
	c := newClock()
	srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
		w.Header().Set("Cache-Control", "max-age=31536000")
		return "User-agent: *\nDisallow: /private\n"
	})
	dir := t.TempDir()
	process := func() *cache.Transport {
		return cache.New(http.DefaultTransport, newDisk(t, dir, 0), cache.Options{Now: c.Now})
	}
	read := func(tr *cache.Transport, path string, k kind.Kind) string {
		return do(t, tr, kind.Mark(newReq(t, http.MethodGet, srv.URL+path), k)).status
	}
	first := process()
	read(first, "/robots.txt", kind.Robots)
	read(first, "/page", kind.HTML)

	c.Advance(23 * time.Hour)
	if got := read(process(), "/robots.txt", kind.Robots); got != cache.Fresh {
		t.Errorf("robots.txt after 23 h = %q, want fresh", got)
	}
	c.Advance(time.Hour + time.Second)
	later := process()
	if got := read(later, "/robots.txt", kind.Robots); got != cache.Miss {
		t.Errorf("robots.txt after 24 h = %q, want miss (fetched again)", got)
	}
	if got := read(later, "/page", kind.HTML); got != cache.Fresh {
		t.Errorf("a page after 24 h = %q, want fresh: the day's limit is robots.txt's", got)
	}
	if n := len(srv.requests()); n != 3 {
		t.Errorf("origin saw %d requests, want 3 (robots.txt twice, the page once)", n)
	}

	// While the origin cannot be reached, the stored copy may still be used (RFC 9309 §2.4).
	c.Advance(25 * time.Hour)
	srv.Close()
	if got := read(process(), "/robots.txt", kind.Robots); got != cache.Stale {
		t.Errorf("robots.txt of an unreachable origin = %q, want stale", got)
	}
}

// TestMinRevisitDoesNotStretchRobotsTxtPastADay: the crawler's minimum revisit interval serves
// stale copies, but never a robots.txt older than 24 hours.
func TestMinRevisitDoesNotStretchRobotsTxtPastADay(t *testing.T) {
	c := newClock()
	srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
		w.Header().Set("Cache-Control", "max-age=3600")
		return "User-agent: *\nDisallow:\n"
	})
	tr := newCache(c, cache.Options{MinRevisit: 48 * time.Hour})
	req := func() string {
		return do(t, tr, kind.Mark(newReq(t, http.MethodGet, srv.URL+"/robots.txt"), kind.Robots)).status
	}
	req()
	c.Advance(2 * time.Hour)
	if got := req(); got != cache.Stale {
		t.Errorf("robots.txt after 2 h under a 48 h minimum revisit = %q, want stale", got)
	}
	c.Advance(23 * time.Hour)
	if got := req(); got != cache.Miss {
		t.Errorf("robots.txt after 25 h under a 48 h minimum revisit = %q, want miss", got)
	}
}
