package matchers_test

import (
	"fmt"
	"net/http"

	"github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/etiquettetest/matchers"
)

// get is the crawler under test in these examples: a client that sends ua, or Go's default.
func get(url, ua string) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if ua != "" {
		req.Header.Set("User-Agent", ua)
	}
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
}

// In a spec, Expect(site).To(matchers.IdentifyEveryRequestAs(ua, from)). Here a Gomega outside
// Ginkgo prints what a failing spec would report: the request that did not say who sent it.
func ExampleIdentifyEveryRequestAs() {
	site := etiquettetest.NewSite()
	defer site.Close()
	shop := site.NewOrigin().Page("/", "Shop").Page("/a", "A")
	get(shop.URL+"/", "ExampleBot/1.0 (+https://example.org/bot)")
	get(shop.URL+"/a", "") // forgot the identity: Go-http-client/1.1

	g := gomega.NewGomega(func(message string, _ ...int) { fmt.Println("failed:", message != "") })
	g.Expect(site).To(matchers.IdentifyEveryRequestAs("ExampleBot/1.0 (+https://example.org/bot)", ""))

	ok, _ := matchers.IdentifyEveryRequestAs("ExampleBot/1.0 (+https://example.org/bot)", "").Match(shop.Requests()[:1])
	fmt.Println("the first request alone:", ok)
	// Output:
	// failed: true
	// the first request alone: true
}

// StartAtMostPerSecond judges arrivals as the site's log shows them: four requests sent back to
// back break a budget of three per second.
func ExampleStartAtMostPerSecond() {
	site := etiquettetest.NewSite()
	defer site.Close()
	shop := site.NewOrigin().Page("/", "Shop")
	for range 4 {
		get(shop.URL+"/", "ExampleBot/1.0")
	}

	m := matchers.StartAtMostPerSecond(3)
	ok, err := m.Match(site)
	fmt.Println(ok, err)
	ok, _ = m.Match(site.Requests()[:3])
	fmt.Println("the first three:", ok)
	// Output:
	// false <nil>
	// the first three: true
}
