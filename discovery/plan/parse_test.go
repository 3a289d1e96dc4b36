package plan

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/politecrawl/etiquette/discovery/links"
)

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// typed is a HeadLink in a comparable form.
type typed struct{ rel, url, typ, title string }

func typedOf(ls []links.HeadLink) []typed {
	var out []typed
	for _, l := range ls {
		out = append(out, typed{string(l.Rel), l.URL.String(), l.Type, l.Title})
	}
	return out
}

func TestHeaderLinksReadsTheTypedLinksOfLinkFields(t *testing.T) {
	base := "https://example.org/blog/"
	tests := []struct {
		name   string
		fields []string
		want   []typed
	}{
		{"the WordPress API root", []string{`<https://example.org/wp-json/>; rel="https://api.w.org/"`},
			[]typed{{"https://api.w.org/", "https://example.org/wp-json/", "", ""}}},
		{"relative target, type and title", []string{`</feed>; rel=alternate; type="application/rss+xml"; title="Posts, all"`},
			[]typed{{"alternate", "https://example.org/feed", "application/rss+xml", "Posts, all"}}},
		{"two links in one field, unknown relations skipped", []string{`<a>; rel=next, <cat>; rel="api-catalog"`},
			[]typed{{"api-catalog", "https://example.org/blog/cat", "", ""}}},
		{"one link with two known relations", []string{`<s.xml>; rel="alternate sitemap"; type=application/xml`},
			[]typed{{"alternate", "https://example.org/blog/s.xml", "application/xml", ""}, {"sitemap", "https://example.org/blog/s.xml", "application/xml", ""}}},
		{"relations compare case-insensitively", []string{`</c>; REL="API-Catalog"`},
			[]typed{{"api-catalog", "https://example.org/c", "", ""}}},
		{"the first of a repeated parameter wins (RFC 8288 §3.3)", []string{`</x>; rel=sitemap; rel=alternate`},
			[]typed{{"sitemap", "https://example.org/x", "", ""}}},
		{"quoted-pair in a title", []string{`</f>; rel=alternate; title="say \"hi\""`},
			[]typed{{"alternate", "https://example.org/f", "", `say "hi"`}}},
		{"several fields", []string{`</a>; rel=sitemap`, `</b>; rel=sitemap`},
			[]typed{{"sitemap", "https://example.org/a", "", ""}, {"sitemap", "https://example.org/b", "", ""}}},
		{"fragment and userinfo dropped", []string{`<https://u:p@example.org/s#top>; rel=sitemap`},
			[]typed{{"sitemap", "https://example.org/s", "", ""}}},
		{"not http(s)", []string{`<mailto:x@example.org>; rel=alternate`, `<ftp://example.org/f>; rel=sitemap`}, nil},
		{"no rel", []string{`</a>; type=text/html`}, nil},
		{"a malformed value ends its field, keeping what came before", []string{`</a>; rel=sitemap, </b> rel=sitemap, </c>; rel=sitemap`},
			[]typed{{"sitemap", "https://example.org/a", "", ""}}},
		{"an unterminated quote", []string{`</a>; rel="sitemap`}, nil},
		{"no angle brackets", []string{`https://example.org/a; rel=sitemap`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{"Link": tt.fields}
			got := typedOf(headerLinks(h, mustURL(t, base)))
			if !slices.Equal(got, tt.want) {
				t.Fatalf("HeaderLinks(%q) = %+v; want %+v", tt.fields, got, tt.want)
			}
		})
	}
}

func TestHeaderLinksIsBounded(t *testing.T) {
	h := http.Header{"Link": {strings.Repeat(`</s>; rel=sitemap, `, 10_000)}}
	if n := len(headerLinks(h, mustURL(t, "https://example.org/"))); n != links.MaxHeadLinks {
		t.Fatalf("HeaderLinks kept %d links; want links.MaxHeadLinks (%d)", n, links.MaxHeadLinks)
	}
}

func FuzzHeaderLinks(f *testing.F) {
	for _, s := range []string{
		`<https://example.org/wp-json/>; rel="https://api.w.org/"`,
		`</feed>; rel=alternate; type="application/rss+xml"; title="a, b"`,
		`<a>; rel=next, <b>; rel="alternate sitemap"`,
		`</f>; rel=alternate; title="say \"hi\""`,
		`<`, `<>;`, `</a>; rel="`,
	} {
		f.Add(s)
	}
	base := mustURL(f, "https://example.org/dir/page")
	f.Fuzz(func(t *testing.T, field string) {
		for _, l := range headerLinks(http.Header{"Link": {field}}, base) {
			if l.URL == nil || (l.URL.Scheme != "http" && l.URL.Scheme != "https") || l.URL.Host == "" || l.URL.User != nil || l.URL.Fragment != "" {
				t.Fatalf("HeaderLinks(%q) reported %v", field, l.URL)
			}
			if _, ok := knownRel(string(l.Rel)); !ok {
				t.Fatalf("HeaderLinks(%q) reported relation %q", field, l.Rel)
			}
		}
	})
}

func TestCarries(t *testing.T) {
	tests := []struct {
		page, href, typ string
		rel             links.Rel
		want            bool
	}{
		{"https://example.org/docs/a", "/docs/a.md", "text/markdown", links.RelAlternate, true},
		{"https://example.org/docs/a", "/docs/a.md", "text/markdown; charset=utf-8", links.RelAlternate, true},
		{"https://example.org/docs/a", "/docs/a.markdown", "text/x-markdown", links.RelAlternate, true},
		{"https://example.org/docs/a.html", "/docs/a.json", "application/json", links.RelAlternate, true},
		{"https://example.org/", "/index.md", "text/markdown", links.RelAlternate, true},
		{"https://example.org/docs/a/", "/docs/a.md", "text/markdown", links.RelAlternate, true},
		{"https://example.org/docs/a/", "/docs/a/index.json", "application/json", links.RelAlternate, true},
		{"https://example.org/a?lang=de", "/a.md?lang=de", "text/markdown", links.RelAlternate, true},
		// Not the page's content, or not this page's.
		{"https://example.org/docs/a", "/docs/a.md", "text/markdown", links.RelSitemap, false},
		{"https://example.org/", "/wp-json/wp/v2/pages/2", "application/json", links.RelAlternate, false},
		{"https://example.org/", "/oembed?url=/", "application/json+oembed", links.RelAlternate, false},
		{"https://example.org/", "/feed.json", "application/feed+json", links.RelAlternate, false},
		{"https://example.org/", "/comments/feed/", "application/rss+xml", links.RelAlternate, false},
		{"https://example.org/a", "/de/a", "text/html", links.RelAlternate, false},
		{"https://example.org/a", "/a.md", "", links.RelAlternate, false},
		{"https://example.org/a", "/b.md", "text/markdown", links.RelAlternate, false},
		{"https://example.org/a", "https://cdn.example.org/a.md", "text/markdown", links.RelAlternate, false},
		{"https://example.org/a", "http://example.org/a.md", "text/markdown", links.RelAlternate, false},
		{"https://example.org/a?x=1", "/a.md", "text/markdown", links.RelAlternate, false},
		{"https://example.org/a.md", "/a.txt", "text/markdown", links.RelAlternate, false},
	}
	for _, tt := range tests {
		t.Run(tt.page+" "+tt.href+" "+tt.typ, func(t *testing.T) {
			page := mustURL(t, tt.page)
			l := links.HeadLink{Rel: tt.rel, URL: page.ResolveReference(mustURL(t, tt.href)), Type: tt.typ}
			if got := carries(page, l); got != tt.want {
				t.Fatalf("Carries = %v; want %v", got, tt.want)
			}
		})
	}
}

func TestParseAPICatalog(t *testing.T) {
	catalog := mustURL(t, "https://example.org/.well-known/api-catalog")
	tests := []struct {
		name, body, ctype string
		apis, docs        []string
		err               error
	}{
		{"service entries (RFC 9727 §4.1)", `{"linkset":[
			{"anchor":"https://example.org/api/v1","service-desc":[{"href":"/api/v1/openapi.json","type":"application/openapi+json"}],
			 "service-doc":[{"href":"/api/v1/docs","type":"text/html"},{"href":"/api/v1/docs.pdf","type":"application/pdf"}]},
			{"anchor":"https://example.org/api/v2","service-meta":[{"href":"/api/v2/meta"}]}]}`,
			"application/linkset+json",
			[]string{"https://example.org/api/v1", "https://example.org/api/v2"}, []string{"https://example.org/api/v1/docs"}, nil},
		{"items (RFC 9727 §4.2)", `{"linkset":[{"anchor":"https://example.org/.well-known/api-catalog",
			"item":[{"href":"https://dev.example.org/apis/foo"},{"href":"/apis/bar"},{"href":"/apis/bar"}]}]}`,
			"application/json",
			[]string{"https://dev.example.org/apis/foo", "https://example.org/apis/bar"}, nil, nil},
		{"a service-doc without a type is a page", `{"linkset":[{"anchor":"/api","service-doc":[{"href":"/api/docs"}]}]}`, "",
			[]string{"https://example.org/api"}, []string{"https://example.org/api/docs"}, nil},
		{"unknown relations and bad values are skipped", `{"linkset":[{"anchor":5,"service-doc":"x","license":[{"href":"/l"}]}]}`, "",
			nil, nil, nil},
		{"an HTML page", `<html></html>`, "text/html", nil, nil, ErrNotCatalog},
		{"not JSON", `api: /v1`, "text/plain", nil, nil, ErrNotCatalog},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseAPICatalog(strings.NewReader(tt.body), catalog, tt.ctype)
			if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("ParseAPICatalog: %v; want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			var docs []string
			for _, d := range c.Docs {
				docs = append(docs, d.String())
			}
			if !slices.Equal(c.APIs, tt.apis) || !slices.Equal(docs, tt.docs) {
				t.Fatalf("APIs %q, Docs %q; want %q, %q", c.APIs, docs, tt.apis, tt.docs)
			}
		})
	}
}

func FuzzParseAPICatalog(f *testing.F) {
	f.Add(`{"linkset":[{"anchor":"/api","service-doc":[{"href":"/docs","type":"text/html"}],"item":[{"href":"/x"}]}]}`)
	f.Add(`{"linkset":[{}]}`)
	f.Add(`{"linkset":null}`)
	f.Add(`[`)
	catalog := mustURL(f, "https://example.org/.well-known/api-catalog")
	f.Fuzz(func(t *testing.T, body string) {
		c, err := parseAPICatalog(strings.NewReader(body), catalog, "application/linkset+json")
		if err != nil {
			if !errors.Is(err, ErrNotCatalog) {
				t.Fatalf("error %v does not wrap ErrNotCatalog", err)
			}
			return
		}
		if len(c.APIs) > maxCatalogAPIs || len(c.Docs) > maxCatalogAPIs {
			t.Fatalf("%d APIs, %d docs: over the limit", len(c.APIs), len(c.Docs))
		}
		for _, d := range c.Docs {
			if d.Scheme != "http" && d.Scheme != "https" {
				t.Fatalf("doc %v is not http(s)", d)
			}
		}
	})
}
