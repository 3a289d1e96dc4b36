package etiquette_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/etiquettetest/matchers"
	"github.com/politecrawl/etiquette/redisstore/redistest"
)

// The shared crawl on a Redis Cluster of three masters: the origin's keys sit in one slot of one
// node, the crawl's own marks on others, and the processes crawl as they do on one server.
var _ = Describe("crawl processes sharing a Redis Cluster of three masters", Ordered, func() {
	var site *etiquettetest.Site
	var o *etiquettetest.Origin
	var codes []int
	BeforeAll(func() {
		bin := buildCLI()
		cl := redistest.StartCluster(GinkgoT())
		site, o = pagesSite(60, etiquettetest.HTMLPage("leaf"))
		codes = awaitExit(startCrawls(bin, 3, cl.URL(), "spec:cluster:", o), 2*time.Minute)
	})

	It("finishes in every process", func() {
		Expect(codes).To(Equal([]int{0, 0, 0}))
	})
	It("starts at most 3 requests in any second at the site", func() {
		Expect(site).To(matchers.StartAtMostPerSecond(3))
	})
	It("fetches robots.txt once and every page once", func() {
		counts := fetchCounts(o)
		Expect(counts).To(HaveLen(61 + 2)) // and /sitemap.xml, /llms.txt
		Expect(counts["/robots.txt"]).To(Equal(1))
		for path, n := range counts {
			Expect(n).To(Equal(1), "%s was fetched %d times", path, n)
		}
	})
})
