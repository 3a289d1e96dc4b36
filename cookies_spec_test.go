package etiquette_test

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/storage"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/cookies"
	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/etiquettetest/matchers"
	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/cache"
)

// everyKindOfCookie is what the site sets on every response, robots.txt included: trackers,
// consent records, an anti-bot clearance, a login, a session, a load balancer's stickiness, a
// name nobody knows, and the site's own app cookie that one task allow-lists.
var everyKindOfCookie = []string{
	"_ga", "_ga_ABC123", "_gid", "_fbp", "OptanonConsent", "CookieConsent", "euconsent-v2",
	"cf_clearance", "wordpress_logged_in_x", "PHPSESSID", "AWSALB", "mystery_id", "myapp_state",
}

// cookieNames lists the names in a request's Cookie headers, sorted.
func cookieNames(r etiquettetest.Request) []string {
	var out []string
	for _, c := range (&http.Request{Header: r.Header}).Cookies() {
		out = append(out, c.Name)
	}
	slices.Sort(out)
	return out
}

var _ = Describe("a site that sets tracking, consent, anti-bot, login, session and load-balancer cookies", func() {
	var (
		site            *etiquettetest.Site
		shop, elsewhere *etiquettetest.Origin
		scratch         string
	)

	BeforeEach(func() {
		setter := func(a etiquettetest.Answer) etiquettetest.Answer {
			for _, n := range everyKindOfCookie {
				a = a.SetCookie(&http.Cookie{Name: n, Value: "v-" + n, Path: "/", MaxAge: 31536000})
			}
			return a
		}
		site = newTestSite()
		shop = site.NewOrigin().
			Serve("/robots.txt", setter(etiquettetest.Text(allowAll))).
			Otherwise(setter(etiquettetest.HTMLPage("a page")))
		// The same host on another port: another origin, which sets no cookies of its own.
		elsewhere = site.NewOrigin().Robots(allowAll).Otherwise(etiquettetest.HTMLPage("another origin"))

		// Point every place Go or Colly could put a file at a fresh directory, so the spec can see
		// that nothing was written.
		scratch = GinkgoT().TempDir()
		for _, env := range []string{"TMPDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "HOME"} {
			dir := filepath.Join(scratch, env)
			Expect(os.Mkdir(dir, 0o700)).To(Succeed())
			GinkgoT().Setenv(env, dir)
		}
	})

	crawl := func(c *colly.Collector, urls ...string) {
		for _, u := range urls {
			Expect(c.Visit(u)).To(Succeed())
		}
		c.Wait()
	}

	Context("with no cookie purpose (the default)", func() {
		It("never sends a Cookie header, to pages or to robots.txt", func() {
			c := colly.NewCollector()
			Expect(extensions.Polite(c, isolatedPolicy(shop.Addr()))).To(Succeed())
			crawl(c, shop.URL+"/one", shop.URL+"/two", shop.URL+"/three")

			Expect(etiquettetest.Paths(shop.Requests())).To(Equal([]string{"/robots.txt", "/one", "/two", "/three"}))
			Expect(shop).To(matchers.SendNoCookies())
		})

		It("strips a Cookie header set by an OnRequest callback, colly.Headers, SetStorage or SetCookies", func() {
			c := colly.NewCollector(colly.Headers(map[string]string{"Cookie": "from=headers"}))
			Expect(extensions.Polite(c, isolatedPolicy(shop.Addr()))).To(Succeed())
			Expect(c.SetStorage(&storage.InMemoryStorage{})).To(Succeed())
			Expect(c.SetCookies(shop.URL, []*http.Cookie{{Name: "PHPSESSID", Value: "planted", Path: "/"}})).To(Succeed())
			c.OnRequest(func(r *colly.Request) { r.Headers.Add("Cookie", "from=callback") })
			crawl(c, shop.URL+"/one", shop.URL+"/two")

			Expect(shop.Requests()).To(HaveLen(3))
			Expect(shop).To(matchers.SendNoCookies())
		})
	})

	Context("with a purpose of session and loadbalancer, and myapp_state allow-listed", func() {
		purpose := func() *cookies.Purpose {
			return &cookies.Purpose{Categories: []cookies.Category{cookies.Session, cookies.LoadBalancer}, Allow: []string{"myapp_state"}}
		}

		It("sends back only PHPSESSID, AWSALB and myapp_state", func() {
			p := isolatedPolicy(shop.Addr())
			p.Cookies = purpose()
			c := colly.NewCollector()
			Expect(extensions.Polite(c, p)).To(Succeed())
			crawl(c, shop.URL+"/one", shop.URL+"/two", shop.URL+"/three")

			reqs := shop.Requests()
			Expect(reqs).To(HaveLen(4))
			Expect(reqs[0].Target).To(Equal("/robots.txt"))
			Expect(cookieNames(reqs[0])).To(BeEmpty(), "nothing is known before the first response")
			for _, r := range reqs[1:] {
				Expect(cookieNames(r)).To(Equal([]string{"AWSALB", "PHPSESSID", "myapp_state"}), "%s", r)
			}
		})

		It("sends them only to the origin that set them, not to the same host on another port", func() {
			p := isolatedPolicy(shop.Addr(), elsewhere.Addr())
			p.Cookies = purpose()
			c := colly.NewCollector()
			Expect(extensions.Polite(c, p)).To(Succeed())
			crawl(c, shop.URL+"/one", elsewhere.URL+"/one", shop.URL+"/two", elsewhere.URL+"/two")

			Expect(elsewhere.Requests()).To(HaveLen(3))
			Expect(elsewhere).To(matchers.SendNoCookies(), "the other origin")
			Expect(site).To(matchers.SendOnlyCookies("AWSALB", "PHPSESSID", "myapp_state"))
			last := shop.Requests()[len(shop.Requests())-1]
			Expect(cookieNames(last)).To(Equal([]string{"AWSALB", "PHPSESSID", "myapp_state"}))
		})
	})

	It("writes nothing to disk, with or without a purpose", func() {
		stateless := colly.NewCollector()
		Expect(extensions.Polite(stateless, isolatedPolicy(shop.Addr()))).To(Succeed())
		crawl(stateless, shop.URL+"/one", shop.URL+"/two")

		p := isolatedPolicy(shop.Addr())
		p.Cookies = &cookies.Purpose{Categories: []cookies.Category{cookies.Session}}
		withJar := colly.NewCollector()
		Expect(extensions.Polite(withJar, p)).To(Succeed())
		crawl(withJar, shop.URL+"/three", shop.URL+"/four")

		Expect(cookieNames(shop.Requests()[len(shop.Requests())-1])).To(Equal([]string{"PHPSESSID"}), "the jar was in use")
		Expect(filesUnder(scratch, false)).To(BeEmpty())
	})

	It("keeps no cookie in the disk cache, so a later process starts without any", func() {
		// A page that may be cached for an hour and sets a session cookie each time it is sent.
		cached := site.NewOrigin().Otherwise(etiquettetest.HTMLPage("page")).
			Serve("/cached", etiquettetest.HTMLPage("page").
				SetCookie(&http.Cookie{Name: "PHPSESSID", Value: "v-first-process", Path: "/"}).
				Header("Cache-Control", "max-age=3600"))
		cacheDir := filepath.Join(scratch, "cache")
		withDiskCache := func() politeness.Policy {
			p := isolatedPolicy(cached.Addr())
			p.NoCache = false
			store, err := cache.NewDiskStore(cacheDir, cache.DiskOptions{})
			Expect(err).NotTo(HaveOccurred())
			p.CacheStore = store
			p.Cookies = &cookies.Purpose{Categories: []cookies.Category{cookies.Session}}
			return p
		}
		first := colly.NewCollector()
		Expect(extensions.Polite(first, withDiskCache())).To(Succeed())
		crawl(first, cached.URL+"/cached")

		files := filesUnder(cacheDir, false)
		Expect(files).NotTo(BeEmpty(), "the page was cached")
		for _, rel := range files {
			f := filepath.Join(cacheDir, rel)
			b, err := os.ReadFile(f)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(b)).NotTo(ContainSubstring("v-first-process"), "a cookie stored in %s", f)
		}

		// A second process: a new door and jar on the same cache directory. /cached is a fresh
		// hit; a stored Set-Cookie would now reach the new jar and be sent on.
		second := colly.NewCollector()
		Expect(extensions.Polite(second, withDiskCache())).To(Succeed())
		crawl(second, cached.URL+"/cached", cached.URL+"/after-restart")
		Expect(etiquettetest.Paths(cached.Requests())).To(HaveExactElements("/robots.txt", "/cached", "/robots.txt", "/after-restart"))
		Expect(cached).To(matchers.SendNoCookies(), "no cookie survived the first process")
	})
})
