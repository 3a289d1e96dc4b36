package extensions_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/identity"
)

// An existing Colly scraper made polite with one line. The site records what it received:
// robots.txt first, then the page, each with the crawler's User-Agent and no cookie — although
// the scraper's callback tries to send a browser User-Agent and a cookie.
func ExamplePolite() {
	var mu sync.Mutex
	var seen []string
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s %q cookie=%q", r.URL.Path, r.UserAgent(), r.Header.Get("Cookie")))
		mu.Unlock()
		fmt.Fprint(w, "<html><title>hello</title></html>")
	}))
	defer site.Close()

	c := colly.NewCollector()
	err := extensions.Polite(c, politeness.Policy{
		Identity: identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0",
			InfoURL: "https://example.org/bot", Contact: "bot@example.org"},
		NoCache: true, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	c.OnRequest(func(r *colly.Request) {
		r.Headers.Set("User-Agent", "Mozilla/5.0 (Windows NT 10.0) Chrome/120.0")
		r.Headers.Set("Cookie", "tracking=1")
	})
	c.OnHTML("title", func(e *colly.HTMLElement) { fmt.Println("title:", e.Text) })
	if err := c.Visit(site.URL + "/"); err != nil {
		fmt.Println(err)
	}
	for _, s := range seen {
		fmt.Println(s)
	}
	// Output:
	// title: hello
	// /robots.txt "ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org)" cookie=""
	// / "ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org)" cookie=""
}

// Without an identity there is no crawl: Polite says what to set, and the collector sends
// nothing, even if the scraper ignores the error.
func ExamplePolite_withoutIdentity() {
	c := colly.NewCollector()
	err := extensions.Polite(c, politeness.Policy{})
	fmt.Println(err != nil)
	fmt.Println(c.Visit("http://127.0.0.1:1/") != nil)
	// Output:
	// true
	// true
}
