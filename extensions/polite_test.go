package extensions_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/extensions"
)

// RFC 9110 §10.1.2: From carries the crawler's contact. Without a configured contact, a From a
// scraper's callback sets must not go out under the crawler's name — on pages, robots.txt and
// redirect hops alike — and with one, the callback's value is replaced by it.
func TestPoliteFromIsTheContactOrNothing(t *testing.T) {
	for _, contact := range []string{"", "bot@example.org"} {
		var mu sync.Mutex
		from := map[string][]string{}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			from[r.URL.Path] = r.Header.Values("From")
			mu.Unlock()
			if r.URL.Path == "/moved" {
				http.Redirect(w, r, "/target", http.StatusFound)
				return
			}
			fmt.Fprint(w, "ok")
		}))
		p := fastPolicy(t, srv, nil)
		p.Identity.Contact = contact
		c := colly.NewCollector(colly.Headers(map[string]string{"From": "headers@else.example"}))
		if err := extensions.Polite(c, p); err != nil {
			t.Fatal(err)
		}
		c.OnRequest(func(r *colly.Request) { r.Headers.Set("From", "callback@else.example") })
		if err := c.Visit(srv.URL + "/moved"); err != nil {
			t.Fatal(err)
		}
		srv.Close()
		for _, path := range []string{"/robots.txt", "/moved", "/target"} {
			got, seen := from[path]
			switch {
			case !seen:
				t.Errorf("contact %q: %s never reached the site", contact, path)
			case contact == "" && len(got) != 0:
				t.Errorf("no contact configured: %s carried From %q", path, got)
			case contact != "" && (len(got) != 1 || got[0] != contact):
				t.Errorf("contact %q: %s carried From %q", contact, path, got)
			}
		}
	}
}
