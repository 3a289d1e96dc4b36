package infopage

// This file decides what the page says: every sentence, built from the identity, the policy and
// the library's defaults, so that the page describes the crawler that actually runs.

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/backoff"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/robots"
	"github.com/politecrawl/etiquette/politeness/webbotauth"
)

// span is a piece of running text: plain text, or code when Code is set; a link when Href is.
type span struct {
	Text string
	Code bool
	Href string
}

// para is a paragraph or a list item.
type para []span

// block is a preformatted example with a caption.
type block struct {
	Caption string
	Text    string
}

// section is one heading of the page, with paragraphs, then a list, then examples.
type section struct {
	ID, Title string
	Paras     []para
	Items     []para
	Blocks    []block
}

// content is the whole page, ready for either renderer.
type content struct {
	Title    string
	Sections []section
}

func text(format string, args ...any) span { return span{Text: fmt.Sprintf(format, args...)} }
func code(s string) span                   { return span{Text: s, Code: true} }
func link(label, href string) span         { return span{Text: label, Href: href} }

// fauUniversity names the university of the FAU profile, whose crawler rules (RRZE) the profile
// follows.
const fauUniversity = "Friedrich-Alexander-Universität Erlangen-Nürnberg (FAU)"

// kindNames says what each kind is called on the page, in kind.All's (discovery) order.
var kindNames = map[kind.Kind]string{
	kind.Robots: "robots.txt", kind.Sitemap: "sitemaps", kind.LLMs: "llms.txt",
	kind.Feed: "feeds", kind.API: "APIs", kind.HTML: "HTML pages",
}

// build writes the page for the crawler running with p; signer is nil when signing is off.
func build(p politeness.Policy, o Options, signer *webbotauth.Signer) content {
	id := p.Identity
	crawl, user := id.CrawlToken(), id.UserTriggeredToken()
	c := content{Title: crawl + ": a web crawler"}
	c.Sections = append(c.Sections,
		about(id, o, crawl),
		identifies(id),
		robotsSection(crawl, user, p.StrictRobots),
		behaviour(p),
		verification(o, signer),
		reach(id),
	)
	return c
}

func about(id identity.Identity, o Options, crawl string) section {
	s := section{ID: "about", Title: "What " + crawl + " is"}
	if o.Purpose != "" {
		s.Paras = append(s.Paras, para{text("%s", o.Purpose)})
	} else {
		s.Paras = append(s.Paras, para{text("%s is an automated web crawler (a bot), not a person using a browser.", crawl)})
	}
	if unit := unit(id, o); unit != "" {
		s.Paras = append(s.Paras, para{text("Responsible: %s.", unit)})
	}
	s.Paras = append(s.Paras, para{text("It reads robots.txt first, keeps to a small request budget per host, slows down when a site asks, and can be reached by e-mail. Details follow.")})
	return s
}

// unit is the responsible unit: Options.Unit, or for the FAU profile the university and the
// organisation the User-Agent names.
func unit(id identity.Identity, o Options) string {
	if o.Unit != "" {
		return o.Unit
	}
	if id.Profile == identity.FAU && id.Org != "" {
		return fauUniversity + ", " + id.Org
	}
	return ""
}

func identifies(id identity.Identity) section {
	s := section{ID: "identity", Title: "How it identifies itself"}
	s.Paras = append(s.Paras, para{text("Every request carries one of these User-Agent headers:")})
	s.Items = append(s.Items,
		para{text("when crawling: "), code(id.UserAgent())},
		para{text("when fetching a single page a person asked for: "), code(id.UserTriggeredAgent())},
	)
	if from := id.From(); from != "" {
		s.Items = append(s.Items, para{text("and the From header "), code(from), text(" (RFC 9110 §10.1.2).")})
	}
	return s
}

// robotsSection says how each token reads robots.txt; strict is Policy.StrictRobots.
func robotsSection(crawl, user string, strict bool) section {
	s := section{ID: "robots", Title: "Controlling it with robots.txt"}
	userReading := para{text("A fetch a person asked for follows only a group that names "), code(user),
		text(": the "), code("*"), text(" group and the crawler's group are about crawling, not about one page a person wants to read now.")}
	if strict {
		userReading = para{text("A fetch a person asked for follows the group that names "), code(user),
			text(" (else the "), code("*"), text(" group), and also the crawler's group: it is refused when any of them disallows the page.")}
	}
	s.Paras = append(s.Paras,
		para{text("Address the crawler as "), code(crawl), text(" and fetches a person asked for as "), code(user),
			text(". The crawler follows the group that names it, and the "), code("*"), text(" group when none does (RFC 9309). Rules take effect when robots.txt is next read: it is kept for %s to %s.",
				human(robots.DefaultMinTTL), human(robots.DefaultMaxTTL))},
		userReading,
	)
	s.Blocks = []block{
		{"Keep the crawler out of one directory", fmt.Sprintf("User-agent: %s\nDisallow: /private/\n", crawl)},
		{"Ask it to wait 10 seconds between requests", fmt.Sprintf("User-agent: %s\nCrawl-delay: 10\n", crawl)},
		{"Refuse pages a person asks it to fetch", fmt.Sprintf("User-agent: %s\nDisallow: /\n", user)},
		{"Keep both out of the whole site", fmt.Sprintf("User-agent: %s\nUser-agent: %s\nDisallow: /\n", crawl, user)},
	}
	return s
}

func behaviour(p politeness.Policy) section {
	s := section{ID: "behaviour", Title: "How it behaves"}
	rate := p.Rate
	if rate <= 0 {
		rate = politeness.DefaultRate
	}
	concurrency := p.Concurrency
	if concurrency <= 0 {
		concurrency = politeness.DefaultConcurrency
	}
	s.Items = append(s.Items, para{text("At most %s request starts per second per host, evenly spaced, without bursts.", number(rate))})
	if len(p.AuthorizedRates) > 0 {
		var hosts []string
		for _, h := range slices.Sorted(maps.Keys(p.AuthorizedRates)) {
			hosts = append(hosts, fmt.Sprintf("%s: %s per second", h, number(p.AuthorizedRates[h])))
		}
		s.Items = append(s.Items, para{text("Faster only where the site's operator allowed it (%s).", strings.Join(hosts, "; "))})
	}
	s.Items = append(s.Items,
		para{text("At most %d %s in flight per host.", concurrency, plural(concurrency, "request", "requests"))},
		para{text("robots.txt is read before anything else on a host. A robots.txt that answers 4xx allows everything; one that answers 429 or 5xx, or cannot be reached, stops all crawling of the host until it can be read. A "),
			code("Crawl-delay"), text(" is honoured as the least gap between two requests, up to %s.", human(hostclock.DefaultMaxFloor))},
		para{code("Retry-After"), text(" (seconds or a date) on a 429, a 503 or any 3xx/5xx pauses every request to the host until then; one beyond %s makes it give the host up for the crawl.", human(backoff.MaxRetryAfter))},
		para{text("A 429 or 503 without Retry-After pauses the host for %s, doubling with each further one up to %s, plus up to %s random jitter; after a 429 the rate drops to %s and recovers by ×%s after each run of %d successes.",
			human(backoff.ThrottledBackoff().Base), human(backoff.ThrottledBackoff().Ceiling), percent(backoff.ThrottledBackoff().Jitter),
			percent(hostclock.PenaltyFactor), number(hostclock.RecoverStep), hostclock.DefaultRecoverAfter)},
		para{text("A GET or HEAD answered 429 or 503 is sent again at most %d times, each time waiting for its turn like any request.", backoff.DefaultMaxRetries)},
		para{text("Other 5xx answers, timeouts and connection errors pause the host for %s, doubling up to %s; after %d failures in a row the host is left alone for the rest of the crawl.",
			human(backoff.TransientBackoff().Base), human(backoff.TransientBackoff().Ceiling), hostclock.DefaultErrorBudget)},
	)
	if p.NoCache {
		s.Items = append(s.Items, para{text("No cache: every read goes to the site.")})
	} else {
		s.Items = append(s.Items, para{text("Responses are cached (RFC 9111): a fresh copy is not fetched again, and a stale one is revalidated with "),
			code("If-None-Match"), text(" / "), code("If-Modified-Since"), text(", so an unchanged page costs a 304.")})
		if p.MinRevisit > 0 {
			s.Items = append(s.Items, para{text("No URL is read from the site more than once every %s.", human(p.MinRevisit))})
		}
	}
	s.Items = append(s.Items, cookiesItems(p)...)
	var order []string
	for _, k := range discoveryOrder {
		if name, ok := kindNames[k]; ok {
			order = append(order, name)
		}
	}
	s.Items = append(s.Items, para{text("It looks for what a site publishes for machines before it reads pages: %s.", strings.Join(order, " → "))})
	return s
}

// cookiesItems says which cookies the crawler keeps: none, those a task needs, and the sites it
// logs in to (Purpose.Login), each in its own item so an operator finds their site by name.
func cookiesItems(p politeness.Policy) []para {
	c := p.Cookies
	if c == nil || (len(c.Categories) == 0 && len(c.Allow) == 0 && len(c.LoginOrigins()) == 0) {
		return []para{{text("No cookies: none is sent and none is kept.")}}
	}
	const never = "tracking, analytics, advertising, consent, anti-bot and paywall cookies are never kept, no cookie crosses to another site, and none is written to disk."
	var items []para
	var what []string
	for _, cat := range c.Categories {
		what = append(what, cat.String()+" cookies")
	}
	for _, n := range c.Allow {
		what = append(what, "the cookie "+n)
	}
	logins := c.LoginOrigins()
	if len(what) > 0 {
		where := "login cookies are never kept either"
		if len(logins) > 0 {
			where = "login cookies only for the sites below"
		}
		items = append(items, para{text("Cookies only where the task needs them (%s); %s; %s", strings.Join(what, ", "), where, never)})
	}
	if len(logins) > 0 {
		items = append(items, para{text("It logs in to: %s — with credentials their operators gave us. Its login and session cookies are kept in memory for those sites only, for the crawl, and sent to no other site.",
			strings.Join(logins, ", "))})
		if len(what) == 0 {
			items = append(items, para{text("No other cookies: %s", strings.ToUpper(never[:1])+never[1:])})
		}
	}
	return items
}

func verification(o Options, signer *webbotauth.Signer) section {
	s := section{ID: "verify", Title: "How to check that a request is ours"}
	s.Paras = append(s.Paras, para{text("The User-Agent alone proves nothing: anyone can send any User-Agent.")})
	if len(o.Networks) > 0 {
		var nets []span
		for i, n := range o.Networks {
			if i > 0 {
				nets = append(nets, text(", "))
			}
			nets = append(nets, code(n.String()))
		}
		s.Paras = append(s.Paras, append(para{text("Our requests come only from these networks: ")}, append(nets, text("."))...))
	}
	if signer == nil {
		s.Paras = append(s.Paras, para{text("This crawler does not sign its requests. If in doubt, write to us with the time and the address the request came from.")})
		return s
	}
	s.Paras = append(s.Paras,
		para{text("Every request is signed (Web Bot Auth: RFC 9421 HTTP Message Signatures with an Ed25519 key). The "),
			code("Signature-Agent"), text(" header names our key directory, "), link(signer.Agent(), signer.Agent()), text(".")},
		para{text("Key in use (JWK SHA-256 thumbprint, the signatures' "), code("keyid"), text("): "), code(signer.KeyID())},
	)
	s.Items = append(s.Items,
		para{text("Fetch the directory and select the key whose thumbprint equals the "), code("keyid"), text(" in "), code("Signature-Input"), text(".")},
		para{text("Check that the signature is tagged "), code(webbotauth.Tag), text(", covers "), code(`"@authority"`), text(" (your host name) and "),
			code(`"signature-agent"`), text(", and has not expired (signatures are valid for %s).", human(signer.Expiry()))},
		para{text("Verify the Ed25519 signature over the RFC 9421 signature base. A signature copied from a request to another site does not verify for yours.")},
	)
	return s
}

func reach(id identity.Identity) section {
	s := section{ID: "contact", Title: "How to reach us"}
	if c := id.From(); c != "" {
		s.Paras = append(s.Paras, para{text("Write to "), link(c, "mailto:"+c),
			text(" if the crawler causes trouble, if you want it to slow down or stay away, or if you have questions. Please say which host is concerned and, if you can, the time of the requests.")})
	} else {
		s.Paras = append(s.Paras, para{text("No e-mail address is configured for this crawler; robots.txt (above) is the way to control it.")})
	}
	s.Paras = append(s.Paras, para{text("This page: "), link(id.InfoURL, id.InfoURL)})
	return s
}

// human writes a duration as a person would: 2 s, 5 min, 24 h.
func human(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + " h"
	case d >= time.Minute && d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + " min"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + " s"
	}
	return d.String()
}

func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func percent(f float64) string { return number(f*100) + " %" }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// discoveryOrder is the order in which the crawler reads what a site publishes (the discovery
// planner's order): robots.txt, sitemaps, llms.txt, feeds and APIs, then HTML.
var discoveryOrder = []kind.Kind{kind.Robots, kind.Sitemap, kind.LLMs, kind.Feed, kind.API, kind.HTML}
