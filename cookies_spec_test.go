package etiquette_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/storage"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/cookies"
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
func cookieNames(h hit) []string {
	var out []string
	for _, c := range (&http.Request{Header: h.Header}).Cookies() {
		out = append(out, c.Name)
	}
	slices.Sort(out)
	return out
}

var _ = Describe("a site that sets tracking, consent, anti-bot, login, session and load-balancer cookies", func() {
	var (
		shop, elsewhere *site
		scratch         string
	)

	BeforeEach(func() {
		setter := func(w http.ResponseWriter, r *http.Request) {
			for _, n := range everyKindOfCookie {
				http.SetCookie(w, &http.Cookie{Name: n, Value: "v-" + n, Path: "/", MaxAge: 31536000})
			}
			if r.URL.Path == "/robots.txt" {
				fmt.Fprint(w, "User-agent: *\nAllow: /\n")
				return
			}
			fmt.Fprint(w, "<html><body>a page</body></html>")
		}
		shop = newSite(setter)
		DeferCleanup(shop.Close)
		// The same host on another port: another origin, which sets no cookies of its own.
		elsewhere = newSite(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				fmt.Fprint(w, "User-agent: *\nAllow: /\n")
				return
			}
			fmt.Fprint(w, "<html><body>another origin</body></html>")
		})
		DeferCleanup(elsewhere.Close)

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

	filesUnder := func(dir string) []string {
		var files []string
		Expect(filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return err
		})).To(Succeed())
		return files
	}

	Context("with no cookie purpose (the default)", func() {
		It("never sends a Cookie header, to pages or to robots.txt", func() {
			c := colly.NewCollector()
			Expect(extensions.Polite(c, isolatedPolicy(shop.budgetKey()))).To(Succeed())
			crawl(c, shop.URL+"/one", shop.URL+"/two", shop.URL+"/three")

			Expect(shop.Paths()).To(Equal([]string{"/robots.txt", "/one", "/two", "/three"}))
			for _, h := range shop.Hits() {
				Expect(h.Header.Values("Cookie")).To(BeEmpty(), "request for %s", h.Path)
			}
		})

		It("strips a Cookie header set by an OnRequest callback, colly.Headers, SetStorage or SetCookies", func() {
			c := colly.NewCollector(colly.Headers(map[string]string{"Cookie": "from=headers"}))
			Expect(extensions.Polite(c, isolatedPolicy(shop.budgetKey()))).To(Succeed())
			Expect(c.SetStorage(&storage.InMemoryStorage{})).To(Succeed())
			Expect(c.SetCookies(shop.URL, []*http.Cookie{{Name: "PHPSESSID", Value: "planted", Path: "/"}})).To(Succeed())
			c.OnRequest(func(r *colly.Request) { r.Headers.Add("Cookie", "from=callback") })
			crawl(c, shop.URL+"/one", shop.URL+"/two")

			Expect(shop.Hits()).To(HaveLen(3))
			for _, h := range shop.Hits() {
				Expect(h.Header.Values("Cookie")).To(BeEmpty(), "request for %s", h.Path)
			}
		})
	})

	Context("with a purpose of session and loadbalancer, and myapp_state allow-listed", func() {
		purpose := func() *cookies.Purpose {
			return &cookies.Purpose{Categories: []cookies.Category{cookies.Session, cookies.LoadBalancer}, Allow: []string{"myapp_state"}}
		}

		It("sends back only PHPSESSID, AWSALB and myapp_state", func() {
			p := isolatedPolicy(shop.budgetKey())
			p.Cookies = purpose()
			c := colly.NewCollector()
			Expect(extensions.Polite(c, p)).To(Succeed())
			crawl(c, shop.URL+"/one", shop.URL+"/two", shop.URL+"/three")

			hits := shop.Hits()
			Expect(hits).To(HaveLen(4))
			Expect(hits[0].Path).To(Equal("/robots.txt"))
			Expect(cookieNames(hits[0])).To(BeEmpty(), "nothing is known before the first response")
			for _, h := range hits[1:] {
				Expect(cookieNames(h)).To(Equal([]string{"AWSALB", "PHPSESSID", "myapp_state"}), "request for %s", h.Path)
			}
		})

		It("sends them only to the origin that set them, not to the same host on another port", func() {
			p := isolatedPolicy(shop.budgetKey(), elsewhere.budgetKey())
			p.Cookies = purpose()
			c := colly.NewCollector()
			Expect(extensions.Polite(c, p)).To(Succeed())
			crawl(c, shop.URL+"/one", elsewhere.URL+"/one", shop.URL+"/two", elsewhere.URL+"/two")

			Expect(elsewhere.Hits()).To(HaveLen(3))
			for _, h := range elsewhere.Hits() {
				Expect(h.Header.Values("Cookie")).To(BeEmpty(), "request for %s on the other origin", h.Path)
			}
			last := shop.Hits()[len(shop.Hits())-1]
			Expect(cookieNames(last)).To(Equal([]string{"AWSALB", "PHPSESSID", "myapp_state"}))
		})
	})

	It("writes nothing to disk, with or without a purpose", func() {
		stateless := colly.NewCollector()
		Expect(extensions.Polite(stateless, isolatedPolicy(shop.budgetKey()))).To(Succeed())
		crawl(stateless, shop.URL+"/one", shop.URL+"/two")

		p := isolatedPolicy(shop.budgetKey())
		p.Cookies = &cookies.Purpose{Categories: []cookies.Category{cookies.Session}}
		withJar := colly.NewCollector()
		Expect(extensions.Polite(withJar, p)).To(Succeed())
		crawl(withJar, shop.URL+"/three", shop.URL+"/four")

		Expect(cookieNames(shop.Hits()[len(shop.Hits())-1])).To(Equal([]string{"PHPSESSID"}), "the jar was in use")
		Expect(filesUnder(scratch)).To(BeEmpty())
	})

	It("keeps no cookie in the disk cache, so a later process starts without any", func() {
		// A page that may be cached for an hour and sets a session cookie each time it is sent.
		cached := newSite(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/cached" {
				http.SetCookie(w, &http.Cookie{Name: "PHPSESSID", Value: "v-first-process", Path: "/"})
				w.Header().Set("Cache-Control", "max-age=3600")
			}
			fmt.Fprint(w, "<html>page</html>")
		})
		DeferCleanup(cached.Close)
		cacheDir := filepath.Join(scratch, "cache")
		withDiskCache := func() politeness.Policy {
			p := isolatedPolicy(cached.budgetKey())
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

		files := filesUnder(cacheDir)
		Expect(files).NotTo(BeEmpty(), "the page was cached")
		for _, f := range files {
			b, err := os.ReadFile(f)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(b)).NotTo(ContainSubstring("v-first-process"), "a cookie stored in %s", f)
		}

		// A second process: a new door and jar on the same cache directory. /cached is a fresh
		// hit; a stored Set-Cookie would now reach the new jar and be sent on.
		second := colly.NewCollector()
		Expect(extensions.Polite(second, withDiskCache())).To(Succeed())
		crawl(second, cached.URL+"/cached", cached.URL+"/after-restart")
		Expect(cached.Paths()).To(HaveExactElements("/robots.txt", "/cached", "/robots.txt", "/after-restart"))
		last := cached.Hits()[len(cached.Hits())-1]
		Expect(last.Header.Values("Cookie")).To(BeEmpty(), "no cookie survived the first process")
	})
})
