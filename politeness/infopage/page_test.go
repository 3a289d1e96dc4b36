package infopage_test

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/politecrawl/etiquette/cookies"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/infopage"
	"github.com/politecrawl/etiquette/politeness/webbotauth"
)

func exampleBot() identity.Identity {
	return identity.Identity{Token: "ExampleBot", Version: "1.0", InfoURL: "https://example.org/bot", Contact: "bot@example.org"}
}

func legalcheck() identity.Identity {
	return identity.Identity{Profile: identity.FAU, Org: "RRZE", Bot: "Legalcheck", Version: "1.0",
		InfoURL: "https://www.rrze.fau.de/bots/legalcheck/", Contact: "webmaster@fau.de"}
}

// pageText returns the text of the HTML page as a reader sees it, failing when it does not parse
// or carries a script or an external resource.
func pageText(t *testing.T, doc []byte) string {
	t.Helper()
	root, err := html.Parse(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "link", "img", "iframe":
				t.Errorf("the page has a <%s> element", n.Data)
			}
			for _, a := range n.Attr {
				if strings.HasPrefix(a.Key, "on") || a.Key == "src" {
					t.Errorf("the page has a %s attribute", a.Key)
				}
			}
		}
		if n.Type == html.TextNode && (n.Parent == nil || n.Parent.Data != "style") {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return b.String()
}

func TestPageSays(t *testing.T) {
	key, err := webbotauth.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	signer, err := (politeness.Policy{Identity: exampleBot(), SignKey: key}).Signer()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		policy  politeness.Policy
		opts    infopage.Options
		want    []string
		wantNot []string
	}{
		{name: "defaults", policy: politeness.Policy{Identity: exampleBot()},
			want: []string{"ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org)",
				"ExampleBot-User/1.0 (+https://example.org/bot; mailto:bot@example.org)",
				"User-agent: ExampleBot\nDisallow: /private/", "User-agent: ExampleBot-User\nDisallow: /",
				"At most 3 request starts per second per host", "At most 2 requests in flight", "Crawl-delay",
				"2 s, doubling with each further one up to 5 min", "25 %", "If-None-Match", "No cookies",
				"robots.txt → sitemaps → llms.txt → feeds → APIs → HTML pages", "The User-Agent alone proves nothing",
				"does not sign its requests", "bot@example.org", "A fetch a person asked for follows only a group that names ExampleBot-User"},
			wantNot: []string{"Signature-Agent", "Responsible:", "networks", "also the crawler's group"}},
		{name: "strict robots.txt reading", policy: politeness.Policy{Identity: exampleBot(), StrictRobots: true},
			want:    []string{"A fetch a person asked for follows the group that names ExampleBot-User (else the * group), and also the crawler's group"},
			wantNot: []string{"follows only a group"}},
		{name: "a slower, narrower crawl", policy: politeness.Policy{Identity: exampleBot(), Rate: 1, Concurrency: 1},
			want: []string{"At most 1 request starts per second", "At most 1 request in flight"}, wantNot: []string{"At most 3", "At most 2"}},
		{name: "authorised rates", policy: politeness.Policy{Identity: exampleBot(), AuthorizedRates: map[string]float64{"b.example": 10, "a.example:8080": 5}},
			want: []string{"a.example:8080: 5 per second; b.example: 10 per second"}},
		{name: "no cache", policy: politeness.Policy{Identity: exampleBot(), NoCache: true}, want: []string{"No cache"}, wantNot: []string{"If-None-Match"}},
		{name: "cookies for a purpose", policy: politeness.Policy{Identity: exampleBot(),
			Cookies: &cookies.Purpose{Categories: []cookies.Category{cookies.Session}, Allow: []string{"lang"}}},
			want: []string{"session cookies, the cookie lang"}, wantNot: []string{"No cookies", "logs in to"}},
		{name: "a login", policy: politeness.Policy{Identity: exampleBot(),
			Cookies: &cookies.Purpose{Login: []string{"https://members.example.org/", "https://intranet.example.org:8443"}}},
			want: []string{"It logs in to: https://members.example.org, https://intranet.example.org:8443",
				"with credentials their operators gave us", "kept in memory for those sites only",
				"analytics, advertising, consent, anti-bot and paywall cookies are never kept"},
			wantNot: []string{"No cookies"}},
		{name: "signing", policy: politeness.Policy{Identity: exampleBot(), SignKey: key},
			want:    []string{"https://example.org/.well-known/http-message-signatures-directory", signer.KeyID(), "web-bot-auth", "5 min"},
			wantNot: []string{"does not sign"}},
		{name: "FAU names its unit", policy: politeness.Policy{Identity: legalcheck()},
			want: []string{"Responsible: Friedrich-Alexander-Universität Erlangen-Nürnberg (FAU), RRZE.", "User-agent: FAU-RRZE-Legalcheck-User"}},
		{name: "purpose, unit and networks", policy: politeness.Policy{Identity: exampleBot()},
			opts: infopage.Options{Purpose: "Checks links of <Example> sites.", Unit: "Web team",
				Networks: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("2001:db8::/32")}},
			want: []string{"Checks links of <Example> sites.", "Responsible: Web team.", "192.0.2.0/24, 2001:db8::/32"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pg, err := infopage.New(c.policy, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			text := pageText(t, pg.HTML())
			// index.md as read: without code fences and escapes.
			md := strings.NewReplacer("`", "", `\`, "").Replace(string(pg.Markdown()))
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("the HTML page does not say %q", w)
				}
				if !strings.Contains(md, w) {
					t.Errorf("index.md does not say %q", w)
				}
			}
			for _, w := range c.wantNot {
				if strings.Contains(text, w) {
					t.Errorf("the HTML page says %q", w)
				}
			}
		})
	}
}

func TestMarkdownEscapesText(t *testing.T) {
	pg, err := infopage.New(politeness.Policy{Identity: exampleBot()}, infopage.Options{Purpose: "Reads *all* [links] <script>x</script>"})
	if err != nil {
		t.Fatal(err)
	}
	md := string(pg.Markdown())
	if strings.Contains(md, "<script>") || strings.Contains(md, "*all*") || !strings.Contains(md, `\*all\*`) {
		t.Errorf("the purpose reached index.md unescaped:\n%s", md)
	}
	if strings.Contains(string(pg.HTML()), "<script>") {
		t.Error("the purpose reached index.html unescaped")
	}
}

func TestNewRefuses(t *testing.T) {
	key, _ := webbotauth.GenerateKey()
	httpID := exampleBot()
	httpID.InfoURL = "http://example.org/bot"
	cases := []struct {
		name    string
		policy  politeness.Policy
		wantErr error
	}{
		{"no identity", politeness.Policy{}, identity.ErrNoIdentity},
		{"invalid identity", politeness.Policy{Identity: identity.Identity{Token: "Example Bot"}}, identity.ErrInvalid},
		{"signing with an http info URL and no agent", politeness.Policy{Identity: httpID, SignKey: key}, webbotauth.ErrAgentNotHTTPS},
	}
	for _, c := range cases {
		if _, err := infopage.New(c.policy, infopage.Options{}); !errors.Is(err, c.wantErr) {
			t.Errorf("%s: New = %v, want %v", c.name, err, c.wantErr)
		}
	}
	httpID.InfoURL = "http://example.org/bot"
	if _, err := infopage.New(politeness.Policy{Identity: httpID, SignKey: key, SignatureAgent: "https://keys.example.org/jwks"}, infopage.Options{}); err != nil {
		t.Errorf("an explicit https signature agent should be enough: %v", err)
	}
}

func TestHandler(t *testing.T) {
	key, _ := webbotauth.GenerateKey()
	pg, err := infopage.New(politeness.Policy{Identity: exampleBot(), SignKey: key}, infopage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := webbotauth.NewDirectory([]ed25519.PrivateKey{key}, webbotauth.DirectoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(infopage.Handler(pg, dir))
	defer srv.Close()
	cases := []struct {
		path, contentType string
		status            int
	}{
		{"/", "text/html; charset=utf-8", 200},
		{"/bot", "text/html; charset=utf-8", 200},
		{"/bot/index.html", "text/html; charset=utf-8", 200},
		{"/bot.md", "text/markdown; charset=utf-8", 200},
		{"/index.md", "text/markdown; charset=utf-8", 200},
		{webbotauth.WellKnownPath, webbotauth.DirectoryMediaType, 200},
		{"/other", "", 404},
	}
	for _, c := range cases {
		resp, err := http.Get(srv.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || (c.contentType != "" && resp.Header.Get("Content-Type") != c.contentType) {
			t.Errorf("GET %s = %d %q, want %d %q", c.path, resp.StatusCode, resp.Header.Get("Content-Type"), c.status, c.contentType)
		}
		if c.path == webbotauth.WellKnownPath {
			if set, err := webbotauth.ParseJWKS(body); err != nil || len(set.Keys) != 1 {
				t.Errorf("the directory served %s (%v)", body, err)
			}
		}
	}
	noDir := httptest.NewServer(infopage.Handler(pg, nil))
	defer noDir.Close()
	resp, err := http.Get(noDir.URL + webbotauth.WellKnownPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("without a directory, %s = %d, want 404", webbotauth.WellKnownPath, resp.StatusCode)
	}
}
