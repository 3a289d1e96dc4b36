// Package infopage writes the page a crawler's User-Agent points to: who runs the crawler and
// why, how to address it in robots.txt, how it behaves, how to verify that a request is really
// from it, and how to reach its operator.
//
// The page is generated from the same identity.Identity and politeness.Policy the crawler runs
// with, and from the library's defaults (the backoff figures, the Crawl-delay cap, …), so it
// cannot drift from what the crawler does: change the policy and the page changes with it.
// [New] builds a [Page]; [Page.HTML] and [Page.Markdown] give index.html (self-contained, no
// JavaScript) and index.md; [Handler] serves the page together with the key directory.
package infopage

import (
	"bytes"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/webbotauth"
)

// Options are what a policy does not say about a crawler. The zero value describes the crawler
// from its policy alone.
type Options struct {
	// Purpose says what the crawler does and why, in a sentence or two; empty means a generic
	// sentence.
	Purpose string
	// Unit is the organisational unit responsible for the crawler. Empty means, for the FAU
	// profile, the university and the organisation in the User-Agent, and otherwise none.
	Unit string
	// Networks are the source networks the crawler sends from, published so operators can
	// check them; nil publishes none.
	Networks []netip.Prefix
}

// Page is the description page of one crawler. Create it with [New]; the zero value is empty.
type Page struct {
	html, markdown []byte
	infoPath       string
}

// New builds the page for the crawler that runs with policy p. It reads p.Identity (which must
// be valid), the Rate, AuthorizedRates, Concurrency, NoCache, MinRevisit and Cookies fields
// (zero meaning the library default, as in the door), and when p.SignKey is set the key
// directory URL and key thumbprint; it fails where [politeness.NewDoor] would refuse the same
// identity or signing settings. A Policy.Clock's own limits are not consulted: set the fields.
func New(p politeness.Policy, o Options) (*Page, error) {
	if p.Identity.IsZero() {
		return nil, fmt.Errorf("infopage: %w", identity.ErrNoIdentity)
	}
	if _, err := p.Identity.Validate(); err != nil {
		return nil, fmt.Errorf("infopage: the crawler identity is not usable: %w", err)
	}
	signer, err := p.Signer()
	if err != nil {
		return nil, err
	}
	c := build(p, o, signer)
	pg := &Page{infoPath: "/"}
	if u, err := url.Parse(p.Identity.InfoURL); err == nil && u.Path != "" {
		pg.infoPath = u.Path
	}
	var h, m bytes.Buffer
	if err := htmlPage.Execute(&h, c); err != nil {
		return nil, fmt.Errorf("infopage: rendering HTML: %w", err)
	}
	if err := markdownPage.Execute(&m, c); err != nil {
		return nil, fmt.Errorf("infopage: rendering Markdown: %w", err)
	}
	pg.html, pg.markdown = h.Bytes(), m.Bytes()
	return pg, nil
}

// HTML returns index.html: one self-contained document, no scripts, no external resources.
func (pg *Page) HTML() []byte { return bytes.Clone(pg.html) }

// Markdown returns index.md, the same text as Markdown.
func (pg *Page) Markdown() []byte { return bytes.Clone(pg.markdown) }

// Handler serves the page and, when dir is not nil, the key directory, to GET and HEAD:
//   - the directory at webbotauth.WellKnownPath;
//   - the HTML page at "/", at the path of the info URL, and at any path ending in /index.html;
//   - the Markdown page at any path ending in /index.md, or at the info URL's path plus ".md".
//
// Everything else is 404.
func Handler(pg *Page, dir *webbotauth.Directory) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		if path == webbotauth.WellKnownPath {
			if dir == nil {
				http.NotFound(w, r)
				return
			}
			dir.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		var body []byte
		switch {
		case path == "/" || path == pg.infoPath || strings.HasSuffix(path, "/index.html"):
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			body = pg.html
		case strings.HasSuffix(path, "/index.md") || path == strings.TrimSuffix(pg.infoPath, "/")+".md":
			w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
			body = pg.markdown
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		if r.Method == http.MethodGet {
			_, _ = w.Write(body)
		}
	})
}
