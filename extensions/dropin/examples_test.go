package dropin_test

// The 14 programs of Colly v2.3.0's _examples folder, rewritten for a loopback site: the same
// collector options, callbacks and control flow, with the public sites they scraped replaced by
// origins that serve what those programs look for. Each calls r.install where the added line
// goes in an existing scraper: after the collector is configured, before its first request.

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/proxy"
	"github.com/gocolly/colly/v2/queue"

	"github.com/politecrawl/etiquette/etiquettetest"
)

var examples = []program{
	{name: "basic", example: true, body: basicExample},
	{name: "max_depth", example: true, body: maxDepthExample},
	{name: "parallel", example: true, unordered: true, body: parallelExample},
	{name: "queue", example: true, unordered: true, body: queueExample},
	{name: "rate_limit", example: true, unordered: true, body: rateLimitExample},
	{name: "random_delay", example: true, unordered: true, body: randomDelayExample},
	{name: "url_filter", example: true, body: urlFilterExample},
	{name: "request_context", example: true, body: requestContextExample},
	{name: "error_handling", example: true, body: errorHandlingExample},
	{name: "proxy_switcher", example: true, about: `(?i)prox`, body: proxySwitcherExample},
	{name: "shopify_sitemap", example: true, body: shopifySitemapExample},
	{name: "xkcd_store", example: true, body: xkcdStoreExample},
	{name: "login", example: true, about: `(?i)cookie|session`, body: loginExample},
	{name: "coursera_courses", example: true, about: `CacheDir`, body: courseraExample},
}

// hostOf is the host name Colly's domain filters compare: "127.0.0.1" for every origin here.
func hostOf(r *run, raw string) string {
	u, err := url.Parse(raw)
	r.must(err)
	return u.Hostname()
}

// A wiki-like site followed link by link within the allowed domains; a link elsewhere is not.
func basicExample(r *run) {
	wiki := r.origin("wiki")
	wiki.Page("/", "Hackerspaces", "/spaces", "/events", "http://elsewhere.invalid/")
	wiki.Page("/spaces", "Spaces", "/", "/spaces/fau")
	wiki.Page("/events", "Events")
	wiki.Page("/spaces/fau", "FAU FabLab")

	c := colly.NewCollector(colly.AllowedDomains(hostOf(r, wiki.URL)))
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		href := e.Attr("href")
		r.printf("link %q -> %s", e.Text, href)
		_ = c.Visit(e.Request.AbsoluteURL(href)) // as in the example: already-visited and filtered links are skipped
	})
	c.OnRequest(func(q *colly.Request) { r.printf("visiting %s", q.URL) })
	r.install(c)
	r.saw(c.Visit(wiki.URL + "/"))
}

// MaxDepth 1: the start page's links are printed, none is fetched.
func maxDepthExample(r *run) {
	site := r.origin("encyclopedia")
	site.Page("/", "Main page", "/wiki/Go", "/wiki/Colly")
	site.Page("/wiki/Go", "Go", "/wiki/Colly")
	site.Page("/wiki/Colly", "Colly")

	c := colly.NewCollector(colly.MaxDepth(1))
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		r.printf("%s", e.Attr("href"))
		_ = e.Request.Visit(e.Attr("href"))
	})
	r.install(c)
	r.saw(c.Visit(site.URL + "/"))
}

// Async with a parallelism limit of 2 and MaxDepth 2: the start page and the pages it links.
func parallelExample(r *run) {
	site := r.origin("encyclopedia")
	site.Page("/", "Main page", "/a", "/b", "/c")
	site.Page("/a", "A", "/a/1")
	site.Page("/b", "B", "/b/1")
	site.Page("/c", "C", "/")

	c := colly.NewCollector(colly.MaxDepth(2), colly.Async())
	r.saw(c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 2}))
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		r.printf("%s", e.Attr("href"))
		_ = e.Request.Visit(e.Attr("href"))
	})
	r.install(c)
	r.saw(c.Visit(site.URL + "/"))
	c.Wait()
}

// A queue of 2 consumers, fed with 5 URLs, whose request callback adds a request to the running
// queue. The example adds one while the request's ID is below 15; IDs are handed out as two
// consumers happen to take requests, so that count varies from run to run — here each of the
// five first URLs adds one, which keeps the pattern and makes two runs comparable.
func queueExample(r *run) {
	site := r.origin("httpbin")
	site.Serve("/delay", etiquettetest.Text("delayed\n").Delay(100*time.Millisecond))
	target := site.URL + "/delay"

	c := colly.NewCollector(colly.AllowURLRevisit())
	q, err := queue.New(2, &queue.InMemoryQueueStorage{MaxSize: 10000})
	r.must(err)
	c.OnRequest(func(req *colly.Request) {
		r.printf("visiting %s", req.URL)
		if n := req.URL.Query().Get("n"); n != "" {
			next, err := req.New("GET", fmt.Sprintf("%s?x=%s", target, n), nil)
			if err == nil {
				r.saw(q.AddRequest(next))
			}
		}
	})
	for i := range 5 {
		r.saw(q.AddURL(fmt.Sprintf("%s?n=%d", target, i)))
	}
	r.install(c)
	r.saw(q.Run(c))
}

// Async requests, a parallelism limit of 2 for the domain, and a debugger attached.
func rateLimitExample(r *run) {
	site := r.origin("httpbin")
	site.Serve("/delay", etiquettetest.Text("delayed\n").Delay(200*time.Millisecond))

	c := colly.NewCollector(colly.Async(), colly.Debugger(&eventLog{r: r}))
	r.saw(c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 2}))
	r.install(c)
	for i := range 5 {
		r.saw(c.Visit(fmt.Sprintf("%s/delay?n=%d", site.URL, i)))
	}
	c.Wait()
}

// As rate_limit, with a random delay (the example's 5 s shortened to 400 ms).
func randomDelayExample(r *run) {
	site := r.origin("httpbin")
	site.Serve("/delay", etiquettetest.Text("delayed\n").Delay(200*time.Millisecond))

	c := colly.NewCollector(colly.Debugger(&eventLog{r: r}), colly.Async())
	r.saw(c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 2, RandomDelay: 400 * time.Millisecond}))
	r.install(c)
	for i := range 4 {
		r.saw(c.Visit(fmt.Sprintf("%s/delay?n=%d", site.URL, i)))
	}
	r.saw(c.Visit(site.URL + "/delay"))
	c.Wait()
}

// URLFilters: only the root and paths starting with "e" or "h" are visited.
func urlFilterExample(r *run) {
	site := r.origin("httpbin")
	site.Page("/", "httpbin", "/encoding", "/headers", "/ip", "/status")
	site.Page("/encoding", "encoding", "/")
	site.Page("/headers", "headers", "/hidden", "/ip")
	site.Page("/hidden", "hidden")
	base := regexp.QuoteMeta(site.URL)

	c := colly.NewCollector(colly.URLFilters(
		regexp.MustCompile(base+`/(|e.+)$`),
		regexp.MustCompile(base+`/h.+`),
	))
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		r.printf("link %q -> %s", e.Text, e.Attr("href"))
		_ = c.Visit(e.Request.AbsoluteURL(e.Attr("href")))
	})
	c.OnRequest(func(q *colly.Request) { r.printf("visiting %s", q.URL) })
	r.install(c)
	r.saw(c.Visit(site.URL + "/"))
}

// A value put into the request's context before it is sent, read back from the response.
func requestContextExample(r *run) {
	site := r.origin("encyclopedia")
	site.Page("/", "Main page")

	c := colly.NewCollector()
	c.OnRequest(func(q *colly.Request) { q.Ctx.Put("url", q.URL.String()) })
	c.OnResponse(func(resp *colly.Response) { r.printf("context url: %s", resp.Ctx.Get("url")) })
	r.install(c)
	r.saw(c.Visit(site.URL + "/"))
}

// A site that cannot be reached: the HTML callback never runs, the error callback does.
func errorHandlingExample(r *run) {
	target := closedAddress(r) + "/"

	c := colly.NewCollector()
	c.OnHTML("*", func(e *colly.HTMLElement) { r.printf("element %s", e.Name) })
	c.OnError(func(resp *colly.Response, err error) {
		r.printf("request %s failed, status %d", resp.Request.URL, resp.StatusCode)
		r.saw(err)
	})
	r.install(c)
	_ = c.Visit(target) // the example ignores Visit's error: OnError reports it
}

// Two proxies taken in turn, five fetches of the page that shows the caller's address.
func proxySwitcherExample(r *run) {
	site := r.origin("httpbin")
	site.Serve("/ip", echoHeaders())
	p1, p2 := forwardProxy(r, "proxy-1"), forwardProxy(r, "proxy-2")

	c := colly.NewCollector(colly.AllowURLRevisit())
	rp, err := proxy.RoundRobinProxySwitcher(p1, p2)
	r.must(err)
	c.SetProxyFunc(rp)
	c.OnResponse(func(resp *colly.Response) {
		r.printf("proxy address %q, via %q", resp.Request.ProxyURL, textOf(resp.Body, "x-via"))
	})
	r.install(c)
	for range 5 {
		r.saw(c.Visit(site.URL + "/ip"))
	}
}

// A sitemap read with an XPath callback on its <loc> elements.
func shopifySitemapExample(r *run) {
	shop := r.origin("shop")
	shop.Serve("/sitemap.xml", etiquettetest.Sitemap(shop.URL+"/", shop.URL+"/pricing", shop.URL+"/blog"))

	var known []string
	c := colly.NewCollector(colly.AllowedDomains(hostOf(r, shop.URL)))
	c.OnXML("//urlset/url/loc", func(e *colly.XMLElement) { known = append(known, e.Text) })
	r.install(c)
	r.saw(c.Visit(shop.URL + "/sitemap.xml"))
	r.printf("all known URLs:")
	for _, u := range known {
		r.printf("\t%s", u)
	}
	r.printf("collected %d URLs", len(known))
}

// A paginated product listing written to CSV, then the collector's statistics.
func xkcdStoreExample(r *run) {
	store := r.origin("store")
	listing := func(page int, next string, items ...string) etiquettetest.Answer {
		var b strings.Builder
		for i, it := range items {
			fmt.Fprintf(&b, `<div class="product-grid-item"><a href="/products/%s" title="%s"><img src="//cdn.example/%s.png"></a><span>$%d.00</span></div>`,
				strings.ToLower(it), it, strings.ToLower(it), 10*page+i)
		}
		if next != "" {
			fmt.Fprintf(&b, `<div class="next"><a href="%s">next</a></div>`, next)
		}
		return htmlDoc(fmt.Sprintf("page %d", page), b.String())
	}
	store.Serve("/collections/everything", listing(1, "/collections/everything/2", "Poster", "Mug"))
	store.Serve("/collections/everything/2", listing(2, "/collections/everything/3", "Shirt"))
	store.Serve("/collections/everything/3", listing(3, "", "Book", "Sticker"))

	var out bytes.Buffer
	w := csv.NewWriter(&out)
	r.saw(w.Write([]string{"Name", "Price", "URL", "Image URL"}))
	c := colly.NewCollector(colly.AllowedDomains(hostOf(r, store.URL)))
	c.OnHTML(".product-grid-item", func(e *colly.HTMLElement) {
		r.saw(w.Write([]string{e.ChildAttr("a", "title"), e.ChildText("span"),
			e.Request.AbsoluteURL(e.ChildAttr("a", "href")), "https:" + e.ChildAttr("img", "src")}))
	})
	c.OnHTML(".next a[href]", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
	r.install(c)
	r.saw(c.Visit(store.URL + "/collections/everything"))
	w.Flush()
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		r.printf("csv %s", l)
	}
	r.printf("%s", c)
}

// A form login, then a page that greets the session's user.
func loginExample(r *run) {
	site := r.origin("example")
	site.Serve("/login", etiquettetest.Func(func(q *http.Request) etiquettetest.Answer {
		if q.Method == "POST" && q.ParseForm() == nil && q.PostForm.Get("username") == "admin" && q.PostForm.Get("password") == "admin" {
			return htmlDoc("logged in", "<h1>Logged in</h1>").SetCookie(sessionCookie())
		}
		return htmlDoc("login", "<h1>Please log in</h1>")
	}))
	site.Serve("/", etiquettetest.Func(func(q *http.Request) etiquettetest.Answer {
		if c, err := q.Cookie("session"); err == nil && c.Value == sessionCookie().Value {
			return htmlDoc("home", "<h1>Welcome back, admin</h1>")
		}
		return htmlDoc("home", "<h1>Please log in</h1>")
	}))

	c := colly.NewCollector()
	r.install(c)
	if err := c.Post(site.URL+"/login", map[string]string{"username": "admin", "password": "admin"}); err != nil {
		r.saw(err)
		r.printf("login failed") // the example exits here (log.Fatal)
		return
	}
	c.OnResponse(func(resp *colly.Response) {
		r.printf("response received %d: %s", resp.StatusCode, textOf(resp.Body, "h1"))
	})
	r.saw(c.Visit(site.URL + "/"))
}

// A catalogue crawled with a disk cache and a clone for the detail pages; the courses found are
// written as JSON. The program is then started again on the same cache directory: what the site
// receives the second time is what the cache saved it.
func courseraExample(r *run) {
	site := r.origin("coursera")
	site.Serve("/browse", htmlDoc("browse", `<a href="/browse/data-science">Data science</a>
		<a href="/browse?action=signup">Sign up</a><a href="/about">About</a>
		<a class="Button_1qxkboh-o_O-primary_cv02ee-o_O-md_28awn8-o_O-primaryLink_109aggg" href="/browse/promo">Promo</a>`))
	site.Serve("/browse/data-science", htmlDoc("data science", `<a class="collection-product-card" href="/learn/go">Go</a>
		<a class="collection-product-card" href="/learn/colly">Colly</a><a class="collection-product-card" href="/degrees/x">Degree</a>`))
	course := func(title, level string) etiquettetest.Answer {
		return htmlDoc(title, `<div id="rendered-content"><h1 class="banner-title">`+title+`</h1><div class="content">About `+title+`</div>
			<span class="number-rating">4.8</span><div class="AboutCourse"><div class="ProductGlance">
			<div><div><svg><title>`+level+` Level</title></svg></div><div><div>`+level+`</div></div></div>
			<div><div><svg><title>Available languages</title></svg></div><div><div>English</div></div></div></div></div></div>`)
	}
	site.Serve("/learn/go", course("Programming in Go", "Beginner"))
	site.Serve("/learn/colly", course("Scraping with Colly", "Intermediate"))
	cacheDir := filepath.Join(r.tmp, "coursera_cache")

	type courseInfo struct{ Title, Description, Creator, Level, URL, Language, Commitment, Rating string }
	scrape := func() {
		c := colly.NewCollector(
			colly.AllowedDomains(hostOf(r, site.URL)),
			colly.CacheDir(cacheDir),
			colly.CacheExpiration(24*time.Hour),
		)
		detail := c.Clone()
		var courses []courseInfo
		c.OnHTML("a[href]", func(e *colly.HTMLElement) {
			if e.Attr("class") == "Button_1qxkboh-o_O-primary_cv02ee-o_O-md_28awn8-o_O-primaryLink_109aggg" {
				return
			}
			link := e.Attr("href")
			if !strings.HasPrefix(link, "/browse") || strings.Contains(link, "=signup") || strings.Contains(link, "=login") {
				return
			}
			_ = e.Request.Visit(link)
		})
		c.OnRequest(func(q *colly.Request) { r.printf("visiting %s", q.URL) })
		c.OnHTML("a.collection-product-card", func(e *colly.HTMLElement) {
			if u := e.Request.AbsoluteURL(e.Attr("href")); strings.Contains(u, "/learn") {
				_ = detail.Visit(u)
			}
		})
		detail.OnHTML("div[id=rendered-content]", func(e *colly.HTMLElement) {
			ci := courseInfo{Title: e.ChildText(".banner-title"), URL: e.Request.URL.String(),
				Description: e.ChildText("div.content"), Rating: e.ChildText("span.number-rating")}
			e.ForEach(".AboutCourse .ProductGlance > div", func(_ int, el *colly.HTMLElement) {
				words := strings.Fields(el.ChildText("div:nth-child(1) svg title"))
				if len(words) == 0 {
					return
				}
				switch words[len(words)-1] {
				case "languages":
					ci.Language = el.ChildText("div:nth-child(2) > div:nth-child(1)")
				case "Level":
					ci.Level = el.ChildText("div:nth-child(2) > div:nth-child(1)")
				}
			})
			courses = append(courses, ci)
		})
		r.install(c)
		r.saw(c.Visit(site.URL + "/browse"))
		js, err := json.Marshal(courses)
		r.saw(err)
		r.printf("courses %s", js)
	}
	scrape()
	r.newProcess()
	r.since()
	r.printf("-- restarted --")
	scrape()
}
