package cache_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// A listing's lastmod lets a stored copy answer without asking the origin, while the copy is
// younger than the trust and was produced at or after the stated change; otherwise the usual
// conditional request goes out.
func TestWithLastModifiedServesAnUnchangedPageWithoutAsking(t *testing.T) {
	const week = 7 * 24 * time.Hour
	fetched := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) // the first read, on the test clock
	tests := []struct {
		name       string
		lastMod    time.Time
		trust      time.Duration
		later      time.Duration // time between the first read and the second
		kind       kind.Kind
		header     []string // the origin's extra response fields
		reqHeader  []string
		wantStatus string
		wantReason string
	}{
		{"changed before the copy was fetched", fetched.Add(-time.Hour), week, time.Hour, kind.HTML, nil, nil, cache.Fresh, cache.ReasonLastModified},
		{"changed the second the copy was produced", fetched, week, time.Hour, kind.HTML, nil, nil, cache.Fresh, cache.ReasonLastModified},
		{"changed after the copy was fetched", fetched.Add(time.Minute), week, time.Hour, kind.HTML, nil, nil, cache.Revalidated, ""},
		{"the copy is older than the trust", fetched.Add(-time.Hour), week, week + time.Second, kind.HTML, nil, nil, cache.Revalidated, ""},
		{"no trust", fetched.Add(-time.Hour), 0, time.Hour, kind.HTML, nil, nil, cache.Revalidated, ""},
		{"no lastmod", time.Time{}, week, time.Hour, kind.HTML, nil, nil, cache.Revalidated, ""},
		{"a kind always revalidated", fetched.Add(-time.Hour), week, time.Hour, kind.Sitemap, nil, nil, cache.Revalidated, ""},
		{"the response says no-cache", fetched.Add(-time.Hour), week, time.Hour, kind.HTML, []string{"Cache-Control", "no-cache"}, nil, cache.Revalidated, ""},
		{"the response says must-revalidate", fetched.Add(-time.Hour), week, time.Hour, kind.HTML, []string{"Cache-Control", "must-revalidate"}, nil, cache.Revalidated, ""},
		{"the request says no-cache", fetched.Add(-time.Hour), week, time.Hour, kind.HTML, nil, []string{"Cache-Control", "no-cache"}, cache.Revalidated, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
				w.Header().Set("ETag", `"v1"`)
				for i := 0; i+1 < len(tt.header); i += 2 {
					w.Header().Set(tt.header[i], tt.header[i+1])
				}
				if r.Header.Get("If-None-Match") == `"v1"` {
					w.WriteHeader(http.StatusNotModified)
					return ""
				}
				return "page"
			})
			tr := newCache(c, cache.Options{HeuristicFraction: -1})
			if r := get(t, tr, srv.URL); r.status != cache.Miss {
				t.Fatalf("first read: %q, want miss", r.status)
			}
			c.Advance(tt.later)

			req := newReq(t, http.MethodGet, srv.URL, tt.reqHeader...)
			ctx := kind.WithKind(context.Background(), tt.kind)
			req = req.WithContext(cache.WithLastModified(ctx, tt.lastMod, tt.trust))
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := cache.StatusOf(resp); got != tt.wantStatus {
				t.Errorf("second read: %q, want %q", got, tt.wantStatus)
			}
			if got := cache.ReasonOf(resp); got != tt.wantReason {
				t.Errorf("second read's reason: %q, want %q", got, tt.wantReason)
			}
			wantRequests := 2
			if tt.wantStatus == cache.Fresh {
				wantRequests = 1
			}
			if n := len(srv.requests()); n != wantRequests {
				t.Errorf("the origin saw %d requests, want %d", n, wantRequests)
			}
		})
	}
}

// The reason header is the cache's own: a value an origin sends is neither passed on nor stored.
func TestAnOriginCannotClaimALastmodReason(t *testing.T) {
	c := newClock()
	srv := newOrigin(t, c, func(w http.ResponseWriter, r *http.Request) string {
		w.Header().Set("Cache-Control", "max-age=60")
		w.Header().Set(cache.ReasonHeader, cache.ReasonLastModified)
		return "page"
	})
	tr := newCache(c, cache.Options{})
	for i, want := range []string{cache.Miss, cache.Fresh} {
		r := get(t, tr, srv.URL)
		if r.status != want || r.header.Get(cache.ReasonHeader) != "" {
			t.Fatalf("read %d: %q with reason %q; want %q and none", i+1, r.status, r.header.Get(cache.ReasonHeader), want)
		}
	}
}
