package dropin_test

// 19 patterns from Colly's documentation (go-colly.org: configuration, callbacks, cookies, proxies,
// queues, caching, robots.txt, extensions), each written as the small program a user would
// write with it. Each site makes the pattern's effect visible in what the program prints: a page
// that echoes the headers it received, a slow page, a long one, a flaky one. r.install goes
// after the collector's configuration and before its first request, except where a comment
// says otherwise.

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/extensions"

	"github.com/politecrawl/etiquette/etiquettetest"
)

var patterns = []program{
	{name: "allowed-domains", body: allowedDomainsPattern},
	{name: "limit-rule", unordered: true, body: limitRulePattern},
	{name: "clone", body: clonePattern},
	{name: "context-to-next-request", body: contextPattern},
	{name: "post-form", body: postFormPattern},
	{name: "set-cookies", about: `(?i)cookie`, body: setCookiesPattern},
	{name: "cookie-header", about: `(?i)cookie`, body: cookieHeaderPattern},
	{name: "user-agent", about: `(?i)user.?agent`, body: userAgentPattern},
	{name: "random-user-agent", about: `(?i)user.?agent`, body: randomUserAgentPattern},
	{name: "referer", about: `(?i)referer`, body: refererPattern},
	{name: "request-timeout", about: `(?i)timeout`, body: requestTimeoutPattern},
	{name: "max-body-size", about: `(?i)MaxBodySize|body`, body: maxBodySizePattern},
	{name: "cache-dir", about: `CacheDir`, body: cacheDirPattern},
	{name: "sitemap-index", body: sitemapIndexPattern},
	{name: "retry-on-error", body: retryPattern},
	{name: "set-proxy", about: `(?i)prox`, body: setProxyPattern},
	{name: "disallowed-url-filters", body: urlFiltersPattern},
	{name: "robots-txt-respected", about: `(?i)robots`, body: robotsPattern},
	{name: "save-bodies", body: saveBodiesPattern},
}

var programs = slices.Concat(examples, patterns)

// followAll prints every page's title and follows every link.
func followAll(r *run, c *colly.Collector) {
	c.OnHTML("title", func(e *colly.HTMLElement) { r.printf("title %q at %s", e.Text, e.Request.URL) })
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
}

// AllowedDomains keeps the crawl on the listed host: links to another host are not fetched.
func allowedDomainsPattern(r *run) {
	site, other := r.origin("site"), r.origin("other")
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	r.name(otherURL, "other")
	site.Page("/", "Home", "/a", otherURL+"/")
	site.Page("/a", "A", otherURL+"/b")
	other.Page("/", "Other")

	c := colly.NewCollector(colly.AllowedDomains("127.0.0.1"))
	followAll(r, c)
	r.install(c)
	r.saw(c.Visit(site.URL + "/"))
}

// A LimitRule with a delay and a parallelism above the door's: the pages are the same.
func limitRulePattern(r *run) {
	site := r.origin("site")
	site.Page("/", "Home", "/1", "/2", "/3", "/4")
	for _, p := range []string{"/1", "/2", "/3", "/4"} {
		site.Page(p, "page "+p)
	}
	c := colly.NewCollector(colly.Async())
	r.saw(c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4, Delay: 100 * time.Millisecond}))
	followAll(r, c)
	r.install(c)
	r.saw(c.Visit(site.URL + "/"))
	c.Wait()
}

// A listing collector and a clone for the detail pages, each with its own callbacks. Here the
// line goes before Clone, so the clone is made from the polite collector.
func clonePattern(r *run) {
	site := r.origin("shop")
	site.Page("/", "Shop", "/item/1", "/item/2")
	site.Serve("/item/1", htmlDoc("Item 1", `<span class="price">3.50</span>`))
	site.Serve("/item/2", htmlDoc("Item 2", `<span class="price">7.00</span>`))

	c := colly.NewCollector()
	r.install(c)
	detail := c.Clone()
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { r.saw(detail.Visit(e.Request.AbsoluteURL(e.Attr("href")))) })
	detail.OnHTML(".price", func(e *colly.HTMLElement) { r.printf("%s costs %s", e.Request.URL.Path, e.Text) })
	r.saw(c.Visit(site.URL + "/"))
}

// A context carried from a listing to the requests it starts (Collector.Request with a Context).
func contextPattern(r *run) {
	site := r.origin("news")
	site.Page("/", "Front page", "/story/1", "/story/2")
	site.Page("/story/1", "Story 1")
	site.Page("/story/2", "Story 2")

	c := colly.NewCollector()
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		ctx := colly.NewContext()
		ctx.Put("listing", e.Request.URL.Path)
		ctx.Put("rank", fmt.Sprint(e.Index+1))
		r.saw(c.Request("GET", e.Request.AbsoluteURL(e.Attr("href")), nil, ctx, nil))
	})
	c.OnHTML("title", func(e *colly.HTMLElement) {
		if from := e.Request.Ctx.Get("listing"); from != "" {
			r.printf("%q ranked %s on %s", e.Text, e.Request.Ctx.Get("rank"), from)
		}
	})
	r.install(c)
	r.saw(c.Visit(site.URL + "/"))
}

// A form sent with Post; the site shows the fields it received.
func postFormPattern(r *run) {
	site := r.origin("search")
	site.Serve("/search", echoHeaders())

	c := colly.NewCollector()
	c.OnResponse(func(resp *colly.Response) { r.printf("%d form %q", resp.StatusCode, textOf(resp.Body, "form")) })
	r.install(c)
	r.saw(c.Post(site.URL+"/search", map[string]string{"q": "colly"}))
}

// Cookies put into Colly's jar with SetCookies before the crawl.
func setCookiesPattern(r *run) {
	site := r.origin("account")
	site.Serve("/whoami", echoHeaders())

	c := colly.NewCollector()
	r.saw(c.SetCookies(site.URL+"/", []*http.Cookie{{Name: "session", Value: "abc123", Path: "/"}}))
	c.OnResponse(func(resp *colly.Response) { r.printf("site saw cookie %q", textOf(resp.Body, "cookie")) })
	r.install(c)
	r.saw(c.Visit(site.URL + "/whoami"))
}

// A Cookie header set on every request by a request callback.
func cookieHeaderPattern(r *run) {
	site := r.origin("account")
	site.Serve("/whoami", echoHeaders())

	c := colly.NewCollector()
	c.OnRequest(func(q *colly.Request) { q.Headers.Set("Cookie", "consent=yes; lang=de") })
	c.OnResponse(func(resp *colly.Response) { r.printf("site saw cookie %q", textOf(resp.Body, "cookie")) })
	r.install(c)
	r.saw(c.Visit(site.URL + "/whoami"))
}

// The UserAgent option.
func userAgentPattern(r *run) {
	site := r.origin("site")
	site.Serve("/ua", echoHeaders())

	c := colly.NewCollector(colly.UserAgent("AcmeScraper/2.0 (+https://acme.example/bot)"))
	c.OnResponse(func(resp *colly.Response) { r.printf("site saw User-Agent %q", textOf(resp.Body, "user-agent")) })
	r.install(c)
	r.saw(c.Visit(site.URL + "/ua"))
}

// extensions.RandomUserAgent: a browser User-Agent on every request.
func randomUserAgentPattern(r *run) {
	site := r.origin("site")
	site.Serve("/ua", echoHeaders())

	c := colly.NewCollector()
	extensions.RandomUserAgent(c)
	c.OnResponse(func(resp *colly.Response) {
		ua := textOf(resp.Body, "user-agent")
		r.printf("site saw a browser User-Agent: %v", strings.HasPrefix(ua, "Mozilla/"))
	})
	r.install(c)
	r.saw(c.Visit(site.URL + "/ua"))
}

// extensions.Referer: a followed link carries the page it was found on.
func refererPattern(r *run) {
	site := r.origin("site")
	site.Page("/", "Home", "/next")
	site.Serve("/next", echoHeaders())

	c := colly.NewCollector()
	extensions.Referer(c)
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
	c.OnResponse(func(resp *colly.Response) {
		if resp.Request.URL.Path == "/next" {
			r.printf("site saw Referer %q", textOf(resp.Body, "referer"))
		}
	})
	r.install(c)
	r.saw(c.Visit(site.URL + "/"))
}

// SetRequestTimeout: a page slower than the timeout fails instead of being waited for.
func requestTimeoutPattern(r *run) {
	site := r.origin("site")
	site.Serve("/slow", etiquettetest.Text("finally\n").Delay(1500*time.Millisecond))

	c := colly.NewCollector()
	c.SetRequestTimeout(300 * time.Millisecond)
	c.OnResponse(func(resp *colly.Response) { r.printf("%s answered %d", resp.Request.URL.Path, resp.StatusCode) })
	c.OnError(func(resp *colly.Response, err error) {
		r.printf("%s failed: timeout %v", resp.Request.URL.Path, isTimeout(err))
		r.saw(err)
	})
	r.install(c)
	_ = c.Visit(site.URL + "/slow")
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// MaxBodySize: a body longer than the limit is cut there.
func maxBodySizePattern(r *run) {
	site := r.origin("site")
	site.Serve("/big", etiquettetest.Text(strings.Repeat("0123456789abcdef", 256))) // 4 KiB

	c := colly.NewCollector(colly.MaxBodySize(1024))
	c.OnResponse(func(resp *colly.Response) { r.printf("%s: %d bytes", resp.Request.URL.Path, len(resp.Body)) })
	r.install(c)
	r.saw(c.Visit(site.URL + "/big"))
}

// CacheDir: a second start of the program reads the pages from the cache, not from the site.
func cacheDirPattern(r *run) {
	site := r.origin("site")
	site.Page("/", "Home", "/a")
	site.Page("/a", "A")
	dir := filepath.Join(r.tmp, "cache")
	scrape := func() {
		c := colly.NewCollector(colly.CacheDir(dir))
		followAll(r, c)
		r.install(c)
		r.saw(c.Visit(site.URL + "/"))
	}
	scrape()
	r.newProcess()
	r.since()
	r.printf("-- restarted --")
	scrape()
}

// A sitemap index followed to its sitemaps with XPath callbacks.
func sitemapIndexPattern(r *run) {
	site := r.origin("site")
	site.Serve("/sitemap.xml", etiquettetest.SitemapIndex(site.URL+"/posts.xml", site.URL+"/pages.xml"))
	site.Serve("/posts.xml", etiquettetest.Sitemap(site.URL+"/2026/hello", site.URL+"/2026/colly"))
	site.Serve("/pages.xml", etiquettetest.Sitemap(site.URL+"/about"))

	c := colly.NewCollector()
	c.OnXML("//sitemapindex/sitemap/loc", func(e *colly.XMLElement) { r.saw(e.Request.Visit(e.Text)) })
	c.OnXML("//urlset/url/loc", func(e *colly.XMLElement) { r.printf("page %s", e.Text) })
	r.install(c)
	r.saw(c.Visit(site.URL + "/sitemap.xml"))
}

// An error callback that retries the request, at most twice; the page fails once with a 500.
func retryPattern(r *run) {
	site := r.origin("site")
	site.Page("/flaky", "Flaky").Nth("/flaky", 1, etiquettetest.Status(http.StatusInternalServerError))

	var retries atomic.Int32
	c := colly.NewCollector()
	c.OnError(func(resp *colly.Response, err error) {
		r.printf("%s failed with %d", resp.Request.URL.Path, resp.StatusCode)
		if retries.Add(1) <= 2 {
			r.saw(resp.Request.Retry())
		}
	})
	c.OnHTML("title", func(e *colly.HTMLElement) { r.printf("title %q", e.Text) })
	r.install(c)
	_ = c.Visit(site.URL + "/flaky")
	r.printf("retries: %d", retries.Load())
}

// SetProxy: every request through one proxy.
func setProxyPattern(r *run) {
	site := r.origin("site")
	site.Serve("/ip", echoHeaders())
	p := forwardProxy(r, "proxy")

	c := colly.NewCollector()
	r.saw(c.SetProxy(p))
	c.OnResponse(func(resp *colly.Response) { r.printf("came through %q", textOf(resp.Body, "x-via")) })
	r.install(c)
	r.saw(c.Visit(site.URL + "/ip"))
}

// DisallowedURLFilters: links matching a pattern are never fetched.
func urlFiltersPattern(r *run) {
	site := r.origin("site")
	site.Page("/", "Home", "/docs", "/admin/users", "/docs/print?page=1")
	site.Page("/docs", "Docs", "/admin/")
	site.Page("/admin/users", "Users")
	site.Page("/docs/print", "Print")

	c := colly.NewCollector(colly.DisallowedURLFilters(regexp.MustCompile(`/admin/`), regexp.MustCompile(`/print\?`)))
	followAll(r, c)
	r.install(c)
	r.saw(c.Visit(site.URL + "/"))
}

// IgnoreRobotsTxt = false: a disallowed page is skipped, and the program tells a robots.txt
// refusal from other errors with errors.Is(err, colly.ErrRobotsTxtBlocked).
func robotsPattern(r *run) {
	site := r.origin("site")
	site.Robots("User-agent: *\nDisallow: /private\n")
	site.Page("/public", "Public")
	site.Page("/private", "Private")

	c := colly.NewCollector()
	c.IgnoreRobotsTxt = false
	c.OnHTML("title", func(e *colly.HTMLElement) { r.printf("title %q", e.Text) })
	r.install(c)
	for _, p := range []string{"/public", "/private"} {
		err := c.Visit(site.URL + p)
		switch {
		case errors.Is(err, colly.ErrRobotsTxtBlocked):
			r.printf("%s skipped: robots.txt", p)
		case err != nil:
			r.printf("%s failed", p)
			r.saw(err)
		default:
			r.printf("%s fetched", p)
		}
	}
}

// A response callback that saves every body to a file.
func saveBodiesPattern(r *run) {
	site := r.origin("site")
	site.Page("/", "Home", "/report.txt")
	site.Serve("/report.txt", etiquettetest.Text("quarterly figures\n"))
	dir := filepath.Join(r.tmp, "saved")
	r.must(os.Mkdir(dir, 0o755))

	c := colly.NewCollector()
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
	c.OnResponse(func(resp *colly.Response) { r.saw(resp.Save(filepath.Join(dir, resp.FileName()))) })
	r.install(c)
	r.saw(c.Visit(site.URL + "/"))
	entries, err := os.ReadDir(dir)
	r.saw(err)
	for _, e := range entries {
		info, err := e.Info()
		r.saw(err)
		if err == nil {
			r.printf("saved %s (%d bytes)", e.Name(), info.Size())
		}
	}
}
