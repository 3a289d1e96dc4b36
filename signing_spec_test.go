package etiquette_test

import (
	"bytes"
	"crypto/ed25519"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	"github.com/gocolly/colly/v2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/net/html"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/infopage"
	"github.com/politecrawl/etiquette/politeness/webbotauth"
)

// checked is one request as a verifying site sees it: the path, the signature fields, and what
// webbotauth.Verify made of them against the crawler's published key set when it arrived.
type checked struct {
	Path   string
	Input  string // Signature-Input
	Fields http.Header
	Result webbotauth.Verification
	Err    error
}

// checks verifies the signature of every request o received, as the origin's server would have
// on arrival: the request rebuilt as the server saw it (path and query, Host, headers), checked
// against keys at the time it arrived.
func checks(o *etiquettetest.Origin, keys webbotauth.JWKS) []checked {
	var out []checked
	for _, r := range o.Requests() {
		target, err := url.ParseRequestURI(r.Target)
		Expect(err).NotTo(HaveOccurred())
		header := r.Header.Clone()
		header.Del("Host")
		received := &http.Request{Method: r.Method, URL: target, Host: r.Header.Get("Host"), Header: header}
		res, err := webbotauth.Verify(received, keys, r.At)
		fields := http.Header{}
		for _, name := range []string{"Signature-Agent", "Signature-Input", "Signature"} {
			if vals := r.Header.Values(name); len(vals) > 0 {
				fields[name] = vals
			}
		}
		out = append(out, checked{Path: r.Path(), Input: r.Header.Get("Signature-Input"), Fields: fields, Result: res, Err: err})
	}
	return out
}

// twoOrigins is a home site whose /go redirects to /landing on a second origin, which answers
// its first request with 429 and Retry-After: 1.
func twoOrigins() (home, away *etiquettetest.Origin) {
	site := newTestSite()
	away = site.NewOrigin().Robots(allowAll).
		Serve("/landing", etiquettetest.HTMLPage("landed")).
		Nth("/landing", 1, etiquettetest.Status(http.StatusTooManyRequests).RetryAfter(time.Second)).
		Otherwise(etiquettetest.HTMLPage("page"))
	home = site.NewOrigin().Robots(allowAll).
		Page("/", "home", "/go").
		Serve("/go", etiquettetest.Redirect(http.StatusFound, away.URL+"/landing")).
		Otherwise(etiquettetest.HTMLPage("page"))
	return home, away
}

// crawl visits home's front page with a Colly collector made polite with p, following links.
func crawl(p politeness.Policy, home *etiquettetest.Origin) {
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

	Context("crawling two origins with a cross-origin redirect and a 429 that is retried", func() {
		It("signs every request that reaches a server — robots.txt, pages, the hop and the retry — and each verifies against the published key set", func() {
			home, away := twoOrigins()
			p := isolatedPolicy(home.Addr(), away.Addr())
			p.SignKey = key
			crawl(p, home)

			Expect(etiquettetest.Paths(home.Requests())).To(HaveExactElements("/robots.txt", "/", "/go"))
			Expect(etiquettetest.Paths(away.Requests())).To(HaveExactElements("/robots.txt", "/landing", "/landing"), "the hop, then the retry after the 429")
			var nonces []string
			for _, c := range append(checks(home, published), checks(away, published)...) {
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
			home, away := twoOrigins()
			p := isolatedPolicy(home.Addr(), away.Addr())
			p.SignKey = key
			crawl(p, home)

			var front checked
			for _, c := range checks(home, published) {
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
			checked := checks(away, published)
			last := checked[len(checked)-1]
			Expect(last.Path).To(Equal("/"))
			Expect(last.Err).To(MatchError(webbotauth.ErrBadSignature), "the same method and path, another authority")
		})
	})

	Context("without a signing key", func() {
		It("signs nothing", func() {
			home, away := twoOrigins()
			crawl(isolatedPolicy(home.Addr(), away.Addr()), home)
			checked := append(checks(home, published), checks(away, published)...)
			Expect(checked).To(HaveLen(6))
			for _, c := range checked {
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
