package etiquette_test

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/net/html"

	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/infopage"
	"github.com/politecrawl/etiquette/politeness/webbotauth"
)

// checked is one request as a verifying site saw it: the path, the signature fields, and what
// webbotauth.Verify made of them against the crawler's published key set.
type checked struct {
	Path   string
	Input  string // Signature-Input
	Fields http.Header
	Result webbotauth.Verification
	Err    error
}

// verifyingSite is a site whose server checks every request's signature as it arrives.
type verifyingSite struct {
	*site
	mu     sync.Mutex
	checks []checked
}

func newVerifyingSite(keys func() webbotauth.JWKS, handler http.HandlerFunc) *verifyingSite {
	v := &verifyingSite{}
	v.site = newSite(func(w http.ResponseWriter, r *http.Request) {
		res, err := webbotauth.Verify(r, keys(), time.Now())
		fields := http.Header{}
		for _, name := range []string{"Signature-Agent", "Signature-Input", "Signature"} {
			if vals := r.Header.Values(name); len(vals) > 0 {
				fields[name] = vals
			}
		}
		v.mu.Lock()
		v.checks = append(v.checks, checked{Path: r.URL.Path, Input: r.Header.Get("Signature-Input"), Fields: fields, Result: res, Err: err})
		v.mu.Unlock()
		handler(w, r)
	})
	return v
}

func (v *verifyingSite) Checks() []checked {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]checked(nil), v.checks...)
}

// twoOrigins is a home site whose /go redirects to /landing on a second origin, which answers
// its first request with 429 and Retry-After: 1.
func twoOrigins(keys func() webbotauth.JWKS) (home, away *verifyingSite) {
	var once sync.Once
	away = newVerifyingSite(keys, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case "/landing":
			throttled := false
			once.Do(func() { throttled = true })
			if throttled {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return
			}
			fmt.Fprint(w, "<html><body>landed</body></html>")
		default:
			fmt.Fprint(w, "<html><body>page</body></html>")
		}
	})
	home = newVerifyingSite(keys, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case "/":
			fmt.Fprint(w, `<html><body><a href="/go">onwards</a></body></html>`)
		case "/go":
			http.Redirect(w, r, away.URL+"/landing", http.StatusFound)
		default:
			fmt.Fprint(w, "<html><body>page</body></html>")
		}
	})
	DeferCleanup(home.Close)
	DeferCleanup(away.Close)
	return home, away
}

// crawl visits home's front page with a Colly collector made polite with p, following links.
func crawl(p politeness.Policy, home *verifyingSite) {
	c := colly.NewCollector()
	Expect(extensions.Polite(c, p)).To(Succeed())
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { _ = e.Request.Visit(e.Attr("href")) })
	Expect(c.Visit(home.URL + "/")).To(Succeed())
	c.Wait()
}

var _ = Describe("a crawler that signs its requests (Web Bot Auth)", func() {
	var (
		key       ed25519.PrivateKey
		published webbotauth.JWKS
		infoSite  *httptest.Server
	)

	BeforeEach(func() {
		var err error
		key, err = webbotauth.GenerateKey()
		Expect(err).NotTo(HaveOccurred())
		// The operator's own info site publishes the key directory; the sites below verify
		// against what it serves, as a site operator would.
		page, err := infopage.New(politeness.Policy{Identity: exampleBot(), SignKey: key}, infopage.Options{})
		Expect(err).NotTo(HaveOccurred())
		dir, err := webbotauth.NewDirectory([]ed25519.PrivateKey{key}, webbotauth.DirectoryOptions{})
		Expect(err).NotTo(HaveOccurred())
		infoSite = httptest.NewServer(infopage.Handler(page, dir))
		DeferCleanup(infoSite.Close)
		resp, err := http.Get(infoSite.URL + webbotauth.WellKnownPath)
		Expect(err).NotTo(HaveOccurred())
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		Expect(resp.Header.Get("Content-Type")).To(Equal(webbotauth.DirectoryMediaType))
		published, err = webbotauth.ParseJWKS(body)
		Expect(err).NotTo(HaveOccurred())
	})
	keys := func() webbotauth.JWKS { return published }

	Context("crawling two origins with a cross-origin redirect and a 429 that is retried", func() {
		It("signs every request that reaches a server — robots.txt, pages, the hop and the retry — and each verifies against the published key set", func() {
			home, away := twoOrigins(keys)
			p := isolatedPolicy(home.budgetKey(), away.budgetKey())
			p.SignKey = key
			crawl(p, home)

			Expect(pathsOf(home.Checks())).To(HaveExactElements("/robots.txt", "/", "/go"))
			Expect(pathsOf(away.Checks())).To(HaveExactElements("/robots.txt", "/landing", "/landing"), "the hop, then the retry after the 429")
			var nonces []string
			for _, c := range append(home.Checks(), away.Checks()...) {
				Expect(c.Err).NotTo(HaveOccurred(), "request for %s", c.Path)
				Expect(c.Result.KeyID).To(Equal(published.Keys[0].Kid), "request for %s", c.Path)
				Expect(c.Result.Agent).To(Equal("https://example.org" + webbotauth.WellKnownPath))
				Expect(c.Input).To(ContainSubstring(`"@authority"`), "request for %s", c.Path)
				Expect(c.Input).To(ContainSubstring(`"signature-agent";key="sig1"`), "request for %s", c.Path)
				Expect(c.Input).To(ContainSubstring(`tag="web-bot-auth"`), "request for %s", c.Path)
				nonces = append(nonces, c.Result.Nonce)
			}
			Expect(nonces).To(HaveLen(6))
			seen := map[string]bool{}
			for _, n := range nonces {
				Expect(seen).NotTo(HaveKey(n), "each request is signed afresh, the retry too")
				seen[n] = true
			}
		})

		It("has signatures that fail when replayed to the other origin", func() {
			home, away := twoOrigins(keys)
			p := isolatedPolicy(home.budgetKey(), away.budgetKey())
			p.SignKey = key
			crawl(p, home)

			var front checked
			for _, c := range home.Checks() {
				if c.Path == "/" {
					front = c
				}
			}
			Expect(front.Err).NotTo(HaveOccurred())
			replay, err := http.NewRequest(http.MethodGet, away.URL+"/", nil)
			Expect(err).NotTo(HaveOccurred())
			for name, vals := range front.Fields {
				replay.Header[name] = vals
			}
			resp, err := http.DefaultClient.Do(replay)
			Expect(err).NotTo(HaveOccurred())
			resp.Body.Close()
			checks := away.Checks()
			last := checks[len(checks)-1]
			Expect(last.Path).To(Equal("/"))
			Expect(last.Err).To(MatchError(webbotauth.ErrBadSignature), "the same method and path, another authority")
		})
	})

	Context("without a signing key", func() {
		It("signs nothing", func() {
			home, away := twoOrigins(keys)
			crawl(isolatedPolicy(home.budgetKey(), away.budgetKey()), home)
			checks := append(home.Checks(), away.Checks()...)
			Expect(checks).To(HaveLen(6))
			for _, c := range checks {
				Expect(c.Fields).To(BeEmpty(), "request for %s", c.Path)
				Expect(c.Err).To(MatchError(webbotauth.ErrNoSignature))
			}
		})
	})

	Context("with an http info URL and no signature agent", func() {
		It("refuses to start and says why", func() {
			p := isolatedPolicy()
			p.Identity.InfoURL = "http://example.org/bot"
			p.SignKey = key
			_, err := politeness.NewDoor(p)
			Expect(err).To(MatchError(webbotauth.ErrAgentNotHTTPS))
			Expect(err.Error()).To(ContainSubstring("Policy.SignatureAgent"))
		})
	})
})

func pathsOf(checks []checked) []string {
	var out []string
	for _, c := range checks {
		out = append(out, c.Path)
	}
	return out
}

// readablePage returns the text of an HTML document as a reader sees it (style excluded).
func readablePage(doc []byte) string {
	root, err := html.Parse(bytes.NewReader(doc))
	Expect(err).NotTo(HaveOccurred())
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		Expect(n.Type == html.ElementNode && n.Data == "script").To(BeFalse(), "the page has no script")
		if n.Type == html.TextNode && n.Parent != nil && n.Parent.Data != "style" {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return b.String()
}

var _ = Describe("the bot's description page, generated from the crawler's policy", func() {
	fau := identity.Identity{Profile: identity.FAU, Org: "RRZE", Bot: "Legalcheck", Version: "1.0",
		InfoURL: "https://www.rrze.fau.de/bots/legalcheck/", Contact: "webmaster@fau.de"}

	It("is HTML that names the exact User-Agent, both robots.txt tokens and the configured rate", func() {
		page, err := infopage.New(politeness.Policy{Identity: fau}, infopage.Options{})
		Expect(err).NotTo(HaveOccurred())
		text := readablePage(page.HTML())
		Expect(text).To(ContainSubstring(fau.UserAgent()))
		Expect(text).To(ContainSubstring(fau.UserTriggeredAgent()))
		Expect(text).To(ContainSubstring("User-agent: FAU-RRZE-Legalcheck\n"))
		Expect(text).To(ContainSubstring("User-agent: FAU-RRZE-Legalcheck-User\n"))
		Expect(text).To(ContainSubstring("At most 3 request starts per second per host"))
		Expect(text).To(ContainSubstring("Friedrich-Alexander-Universität Erlangen-Nürnberg (FAU), RRZE"))
		Expect(text).To(ContainSubstring("The User-Agent alone proves nothing"))
	})

	It("changes when the policy does: rate 1 and concurrency 1", func() {
		before, err := infopage.New(politeness.Policy{Identity: exampleBot()}, infopage.Options{})
		Expect(err).NotTo(HaveOccurred())
		after, err := infopage.New(politeness.Policy{Identity: exampleBot(), Rate: 1, Concurrency: 1}, infopage.Options{})
		Expect(err).NotTo(HaveOccurred())
		was, is := readablePage(before.HTML()), readablePage(after.HTML())
		Expect(was).To(ContainSubstring("At most 3 request starts per second per host"))
		Expect(was).To(ContainSubstring("At most 2 requests in flight per host"))
		Expect(is).To(ContainSubstring("At most 1 request starts per second per host"))
		Expect(is).To(ContainSubstring("At most 1 request in flight per host"))
		Expect(string(after.Markdown())).To(ContainSubstring("At most 1 request starts per second per host"))
	})
})
