package etiquettetest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/politecrawl/etiquette/etiquettetest"
)

// fetch is the crawler under test in these examples: a plain client that identifies itself.
func fetch(url string, header ...string) int {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	req.Header.Set("User-Agent", "ExampleBot/1.0")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// A site with one origin, a crawl, and rules judged over what the site received. The crawler
// here reads robots.txt first and skips /cart, but sends its requests as fast as it can.
func Example() {
	site := etiquettetest.NewSite()
	defer site.Close()
	shop := site.NewOrigin().Robots("User-agent: *\nDisallow: /cart\n")
	shop.Page("/", "Shop", "/a", "/b", "/cart")
	shop.Page("/a", "A").Page("/b", "B")

	for _, path := range []string{"/robots.txt", "/", "/a", "/b"} {
		fetch(shop.URL + path)
	}

	fmt.Println(etiquettetest.Paths(site.Requests()))
	for _, rule := range []etiquettetest.Rule{
		etiquettetest.FetchRobotsTxtFirst(),
		etiquettetest.NeverRequest("/cart"),
		etiquettetest.IdentifyEveryRequestAs("ExampleBot/1.0", ""),
		etiquettetest.StartAtMostPerSecond(3),
	} {
		var broken *etiquettetest.ViolationError
		if err := rule.Check(site.Requests()); errors.As(err, &broken) {
			fmt.Printf("%s: broken by %d requests\n", rule, len(broken.Offences))
		} else {
			fmt.Printf("%s: kept\n", rule)
		}
	}
	// Output:
	// [/robots.txt / /a /b]
	// each origin's robots.txt to be answered before any other request arrives there: kept
	// no request for /cart: kept
	// every request to identify as User-Agent "ExampleBot/1.0": kept
	// at most 3 request starts in any second per host:port: broken by 4 requests
}

// A site as a demo would serve it: a home page linking to its feed, a sitemap index pointing at a
// gzipped sitemap, llms.txt and a WordPress REST API listing.
func ExampleNewSite() {
	site := etiquettetest.NewSite()
	defer site.Close()
	blog := site.NewOrigin()
	blog.Robots("User-agent: *\nAllow: /\nSitemap: " + blog.URL + "/sitemap.xml\n")
	post := blog.URL + "/2026/hello"
	blog.Serve("/", etiquettetest.HTMLPage("Blog", post).Alternate("application/rss+xml", "/feed"))
	blog.Page("/2026/hello", "Hello")
	blog.Serve("/feed", etiquettetest.RSS("Blog", post))
	blog.Serve("/sitemap.xml", etiquettetest.SitemapIndex(blog.URL+"/posts.xml.gz"))
	blog.Serve("/posts.xml.gz", etiquettetest.Sitemap(post).Gzipped())
	blog.Serve("/llms.txt", etiquettetest.LLMsTxt("Blog", post))
	blog.Serve("/wp-json/wp/v2/posts", etiquettetest.WordPressPosts(post))

	for _, path := range []string{"/", "/feed", "/sitemap.xml", "/posts.xml.gz", "/llms.txt", "/wp-json/wp/v2/posts"} {
		fetch(blog.URL + path)
	}
	for _, r := range site.Requests() {
		fmt.Println(r.Target, r.Status, r.Answer.Get("Content-Type"))
	}
	// Output:
	// / 200 text/html; charset=utf-8
	// /feed 200 application/rss+xml
	// /sitemap.xml 200 application/xml
	// /posts.xml.gz 200 application/gzip
	// /llms.txt 200 text/plain; charset=utf-8
	// /wp-json/wp/v2/posts 200 application/json; charset=UTF-8
}

// A crawl, a mark, and a second crawl that revalidates with the ETag it kept: judged alone,
// the second crawl cost the site only 304s.
func ExampleSite_Since() {
	site := etiquettetest.NewSite()
	defer site.Close()
	shop := site.NewOrigin().Serve("/a", etiquettetest.HTMLPage("A").ETag("a1"))

	fetch(shop.URL + "/a")
	mark := site.Mark()
	fetch(shop.URL+"/a", "If-None-Match", `"a1"`)

	for _, r := range site.Since(mark) {
		fmt.Println(r.Target, r.Status, r.NotModified())
	}
	fmt.Println(etiquettetest.RevalidateWith304().Check(site.Since(mark)))
	// Output:
	// /a 304 true
	// <nil>
}

// The second request for a page is answered 429 with Retry-After: 2; the crawler here comes
// straight back, which the site records and WaitAfterRetryAfter reports.
func ExampleOrigin_Nth() {
	site := etiquettetest.NewSite()
	defer site.Close()
	shop := site.NewOrigin().Page("/p", "P").Nth("/p", 2, etiquettetest.Status(http.StatusTooManyRequests).RetryAfter(2*time.Second))

	fmt.Println(fetch(shop.URL+"/p"), fetch(shop.URL+"/p"), fetch(shop.URL+"/p"))

	var broken *etiquettetest.ViolationError
	if errors.As(etiquettetest.WaitAfterRetryAfter().Check(site.Requests()), &broken) {
		fmt.Println("too early:", broken.Offences[0].Request.Target)
	}
	// Output:
	// 200 429 200
	// too early: /p
}

// robots.txt held until the test lets it go: while it is held, the recording shows the request
// as in flight, and a polite crawler would send nothing else to the origin.
func ExampleAnswer_HoldUntil() {
	site := etiquettetest.NewSite()
	defer site.Close()
	release := make(chan struct{})
	shop := site.NewOrigin().Serve("/robots.txt", etiquettetest.Text("User-agent: *\nAllow: /\n").HoldUntil(release))

	answered := make(chan int)
	go func() { answered <- fetch(shop.URL + "/robots.txt") }()
	if err := site.Await(context.Background(), 1); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("held:", site.Requests()[0].Status, site.Requests()[0].Done.IsZero())
	close(release)
	fmt.Println("released:", <-answered)
	// Output:
	// held: 0 true
	// released: 200
}
