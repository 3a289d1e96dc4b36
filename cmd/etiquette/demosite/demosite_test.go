package demosite_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/politecrawl/etiquette/cmd/etiquette/demosite"
)

// get fetches u as a crawler without a cache would, with optional request headers as pairs.
func get(t *testing.T, u string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("User-Agent", "demosite-test")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func start(t *testing.T) *demosite.Site {
	t.Helper()
	s, err := demosite.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestSiteServesWhatItPromises(t *testing.T) {
	s := start(t)
	tests := []struct {
		name   string
		url    string
		status int
		header map[string]string // headers the answer must carry, by prefix of their value
		body   []string          // strings the (decompressed) body must contain
	}{
		{"the archive's robots.txt is unavailable, with a short pause", s.Archive.URL + "/robots.txt", 503,
			map[string]string{"Retry-After": "1"}, nil},
		{"the blog's robots.txt has a group for the demo bot, a Disallow and a Sitemap line", s.Blog.URL + "/robots.txt", 200, nil,
			[]string{"User-agent: *\n", "User-agent: EtiquetteDemoBot\n", "Disallow: /drafts/\n", "Sitemap: " + s.Blog.URL + "/sitemap_index.xml\n"}},
		{"the shop's robots.txt disallows the cart and names its sitemap", s.Shop.URL + "/robots.txt", 200, nil,
			[]string{"Disallow: /cart\n", "Sitemap: " + s.Shop.URL + "/sitemap.xml\n"}},
		{"the sitemap index points at a gzipped sitemap", s.Blog.URL + "/sitemap_index.xml", 200, nil,
			[]string{"<sitemapindex", "<loc>" + s.Blog.URL + "/post-sitemap.xml.gz</loc>"}},
		{"the gzipped sitemap lists the posts", s.Blog.URL + "/post-sitemap.xml.gz", 200,
			map[string]string{"Content-Type": "application/gzip"}, []string{"<urlset", "<loc>" + s.Blog.URL + "/2026/hello-crawlers</loc>"}},
		{"the feed lists the posts", s.Blog.URL + "/feed/", 200, map[string]string{"Content-Type": "application/rss+xml"},
			[]string{"<rss", "<link>" + s.Blog.URL + "/2026/three-a-second</link>"}},
		{"the WordPress API lists the posts", s.Blog.URL + "/wp-json/wp/v2/posts", 200, map[string]string{"X-WP-Total": "4"},
			[]string{`"link":"` + s.Blog.URL + `/2026/when-a-site-says-wait"`}},
		{"the blog's llms.txt links the Markdown posts", s.Blog.URL + "/llms.txt", 200, nil,
			[]string{"# The Polite Blog\n", "(" + s.Blog.URL + "/2026/hello-crawlers.md)"}},
		{"the docs' llms.txt", s.Docs.URL + "/llms.txt", 200, nil, []string{"(" + s.Docs.URL + "/bot.md)"}},
		{"a blog page advertises the API and sets tracking and consent cookies", s.Blog.URL + "/about", 200,
			map[string]string{"Link": "<" + s.Blog.URL + `/wp-json/>; rel="https://api.w.org/"`, "Set-Cookie": "_ga="},
			[]string{`<link rel="alternate" type="text/markdown" href="/about.md">`}},
		{"the blog's home links its feed with rel=alternate", s.Blog.URL + "/", 200, nil,
			[]string{`<link rel="alternate" type="application/rss+xml" href="/feed/">`, `href="/drafts/next-post"`}},
		{"a page's Markdown source", s.Docs.URL + "/guide/identity.md", 200, nil, []string{"# Your own identity\n", "demo@example.invalid"}},
		{"the shop's help redirects to the docs", s.Shop.URL + "/help", 301, map[string]string{"Location": s.Docs.URL + "/guide"}, nil},
		{"the shop's pages set a session cookie", s.Shop.URL + "/products/kyusu", 200, map[string]string{"Set-Cookie": "PHPSESSID="}, nil},
		{"the demo identity's info page", s.Identity.InfoURL, 200, nil, []string{"<h1>EtiquetteDemoBot</h1>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := get(t, tt.url)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			for k, want := range tt.header {
				if !hasValuePrefix(resp.Header.Values(k), want) {
					t.Errorf("%s: %q, want one starting %q", k, resp.Header.Values(k), want)
				}
			}
			if resp.Header.Get("Content-Type") == "application/gzip" {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatalf("not gzip: %v", err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatalf("broken gzip: %v", err)
				}
			}
			for _, want := range tt.body {
				if !strings.Contains(string(body), want) {
					t.Errorf("body lacks %q:\n%s", want, body)
				}
			}
		})
	}
}

func hasValuePrefix(values []string, prefix string) bool {
	for _, v := range values {
		if strings.HasPrefix(v, prefix) {
			return true
		}
	}
	return false
}

func TestShopAnswers429OnlyOnce(t *testing.T) {
	s := start(t)
	var got []int
	for range 3 {
		resp, _ := get(t, s.Shop.URL+"/products")
		got = append(got, resp.StatusCode)
		if resp.StatusCode == 429 && resp.Header.Get("Retry-After") != "2" {
			t.Errorf("429 with Retry-After %q, want 2", resp.Header.Get("Retry-After"))
		}
	}
	if got[0] != 429 || got[1] != 200 || got[2] != 200 {
		t.Errorf("statuses %v, want [429 200 200]", got)
	}
}

// TestEveryDocumentRevalidates: a second crawl through a cache must ask again (no-cache) and gets
// 304 for every page, Markdown source, robots.txt, sitemap, feed, API listing and llms.txt.
func TestEveryDocumentRevalidates(t *testing.T) {
	s := start(t)
	paths := map[string][]string{
		s.Blog.URL: {"/robots.txt", "/", "/index.md", "/about", "/2026/hello-crawlers", "/2026/hello-crawlers.md", "/sitemap_index.xml",
			"/post-sitemap.xml.gz", "/page-sitemap.xml", "/feed/", "/wp-json/wp/v2/posts", "/llms.txt"},
		s.Shop.URL: {"/robots.txt", "/", "/products/samovar", "/sitemap.xml"},
		s.Docs.URL: {"/robots.txt", "/", "/guide", "/bot.md", "/llms.txt", "/sitemap.xml"},
	}
	for base, ps := range paths {
		for _, p := range ps {
			first, _ := get(t, base+p)
			etag, modified := first.Header.Get("ETag"), first.Header.Get("Last-Modified")
			if first.StatusCode != 200 || etag == "" || modified == "" || first.Header.Get("Cache-Control") != "no-cache" {
				t.Errorf("%s: status %d, ETag %q, Last-Modified %q, Cache-Control %q; want 200 with both validators and no-cache",
					p, first.StatusCode, etag, modified, first.Header.Get("Cache-Control"))
				continue
			}
			if again, _ := get(t, base+p, "If-None-Match", etag); again.StatusCode != 304 {
				t.Errorf("%s with If-None-Match %s: %d, want 304", p, etag, again.StatusCode)
			}
			if again, _ := get(t, base+p, "If-Modified-Since", modified); again.StatusCode != 304 {
				t.Errorf("%s with If-Modified-Since %s: %d, want 304", p, modified, again.StatusCode)
			}
		}
	}
}

// TestLinksLeadSomewhere: every link of every page of the crawlable origins is served, or is
// one that robots.txt disallows on purpose, or the cross-origin redirect; a broken link would
// only add 404s to the demo's report.
func TestLinksLeadSomewhere(t *testing.T) {
	s := start(t)
	disallowed := []string{"/drafts/", "/wp-admin/", "/cart", "/checkout"}
	seen := map[string]bool{}
	queue := []string{s.Blog.URL + "/", s.Shop.URL + "/", s.Docs.URL + "/"}
	pages := 0
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		if seen[u] {
			continue
		}
		seen[u] = true
		resp, body := get(t, u)
		if resp.StatusCode == 429 {
			resp, body = get(t, u) // the shop's one 429
		}
		if resp.StatusCode == 301 {
			continue
		}
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d", u, resp.StatusCode)
			continue
		}
		pages++
		doc, err := html.Parse(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		base, _ := url.Parse(u)
		for n := range doc.Descendants() {
			if n.Type != html.ElementNode || n.Data != "a" {
				continue
			}
			for _, a := range n.Attr {
				if a.Key != "href" {
					continue
				}
				ref, err := base.Parse(a.Val)
				if err != nil {
					t.Errorf("%s: link %q: %v", u, a.Val, err)
					continue
				}
				if !isDisallowed(ref.Path, disallowed) {
					queue = append(queue, ref.String())
				}
			}
		}
	}
	if pages < 10 || pages > 40 {
		t.Errorf("%d HTML pages reachable by links; the demo wants a crawl of 10 to 40, short at 3 starts/s", pages)
	}
}

func isDisallowed(p string, prefixes []string) bool {
	for _, d := range prefixes {
		if strings.HasPrefix(p, d) {
			return true
		}
	}
	return false
}

func TestIdentityIsValidAndLocal(t *testing.T) {
	s := start(t)
	if _, err := s.Identity.Validate(); err != nil {
		t.Fatalf("the demo identity is refused: %v", err)
	}
	if s.Identity.CrawlToken() != demosite.Token || !strings.HasPrefix(s.Identity.InfoURL, s.Docs.URL+"/") {
		t.Errorf("identity %+v: want token %s and an info URL on the docs origin %s", s.Identity, demosite.Token, s.Docs.URL)
	}
	for _, u := range s.StartURLs {
		parsed, err := url.Parse(u)
		if err != nil || parsed.Hostname() != "127.0.0.1" {
			t.Errorf("start URL %q is not on loopback", u)
		}
	}
	if len(s.StartURLs) != 4 {
		t.Errorf("start URLs %v, want the four origins' home pages", s.StartURLs)
	}
}

func TestRecordingShowsTheRequests(t *testing.T) {
	s := start(t)
	get(t, s.Blog.URL+"/robots.txt")
	mark := s.Mark()
	get(t, s.Docs.URL+"/guide")
	since := s.Since(mark)
	if len(since) != 1 || since[0].Target != "/guide" {
		t.Errorf("recording since the mark: %v, want [/guide]", since)
	}
}

func TestWordPressListingIsJSON(t *testing.T) {
	s := start(t)
	_, body := get(t, s.Blog.URL+"/wp-json/wp/v2/posts")
	var posts []struct {
		Link string `json:"link"`
	}
	if err := json.Unmarshal(body, &posts); err != nil || len(posts) != 4 {
		t.Errorf("listing %s: %d posts, err %v; want 4", body, len(posts), err)
	}
}
