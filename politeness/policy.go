package politeness

// This file decides what a Policy means: its fields, their defaults, and what the door builds
// from them.

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/politecrawl/etiquette/cookies"
	"github.com/politecrawl/etiquette/internal/quietlog"
	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/robots"
	"github.com/politecrawl/etiquette/politeness/webbotauth"
)

// Mode says whose request the door sends.
type Mode int

const (
	// Crawl: the crawler follows links on its own; robots.txt is decided for the crawl token.
	Crawl Mode = iota
	// UserTriggered: one page fetched because a person asked for it; the door identifies with the
	// user-triggered token (e.g. ExampleBot-User), robots.txt is decided only by a group naming
	// that token (see Policy.StrictRobots), the wait for the origin's turn is bounded
	// (Policy.MaxWait), and nothing is kept past the session (an in-memory cache, no cookies
	// without a purpose).
	UserTriggered
)

func (m Mode) String() string {
	if m == UserTriggered {
		return "user-triggered"
	}
	return "crawl"
}

// Policy configures a [Door]. Only Identity is required; every other zero field means the
// documented default.
type Policy struct {
	// Identity is who the crawler says it is. Required: there is no default identity, and
	// NewDoor refuses a zero or invalid one.
	Identity identity.Identity
	// Mode selects the crawl token (Crawl, the default) or the user-triggered token.
	Mode Mode
	// StrictRobots applies to a UserTriggered door: the fetch is also blocked when RFC 9309's
	// group selection for the user-triggered token (its own group, else "*") disallows it, or
	// when the crawl token's group (its own, else "*") does — the most cautious reading. By
	// default only a group that names the user-triggered token decides such a fetch: an operator
	// who excluded crawlers decided about crawling, not about one reader acting for a person.
	StrictRobots bool
	// MaxWait applies to a UserTriggered door: the longest a person's request waits for its
	// origin's turn — the budget, a Crawl-delay, a Retry-After, robots.txt — counted from when it
	// entered the door, redirect hops included. When the clock already knows the earliest start
	// is later, the request fails at once with a *hostclock.WaitTooLongError naming the reason;
	// a wait that reaches the bound (in line behind the origin's requests in flight, or for
	// robots.txt) fails then, marked with ErrMaxWaitPassed. errors.Is(err,
	// context.DeadlineExceeded) holds for all three, and nothing is sent early. The robots.txt
	// request counts as a start: behind a Crawl-delay of 10 s or more (the clock adds a
	// small margin) a page whose robots.txt was just read cannot start within the default. 0
	// means DefaultMaxWait; a negative MaxWait is refused by NewDoor.
	MaxWait time.Duration

	// Rate is the number of request starts per second per budget key (host[:port]); 0 means 3.
	// A rate above 3 is refused: list the hosts whose operators allowed more in AuthorizedRates.
	Rate float64
	// AuthorizedRates lists budget keys whose operators allowed a higher rate (RRZE crawler
	// rules), and that rate; every other key keeps Rate.
	AuthorizedRates map[string]float64
	// Concurrency caps the requests in flight per budget key; 0 means 2.
	Concurrency int
	// LatencyFactor spaces an origin's starts at least this many times its smoothed response
	// time, so a server that answers slowly gets a slower crawl (hostclock.Config.LatencyFactor);
	// 0 means the default, 2. The process-wide clock always applies the default; a larger factor
	// gives the door its own stricter clock on top. A smaller or negative one cannot loosen the
	// shared clock: pass a Policy.Clock built with it (a negative factor turns pacing by response
	// time off).
	LatencyFactor float64
	// Timeout bounds one request, counted from the moment the host clock grants its slot, so
	// waiting for a turn never times a request out; 0 means 30 s.
	Timeout time.Duration

	// CacheStore holds cached responses. nil means, for a Crawl, a disk store in the user cache
	// directory (cache.DefaultDir), which the process's doors share (one per directory); a bounded
	// in-memory store when there is no such directory; and for a
	// UserTriggered fetch a bounded in-memory store: nothing of a person's fetch outlives the
	// session, so a UserTriggered door refuses any store but a *cache.MemoryStore. Ignored when
	// NoCache.
	CacheStore cache.Store
	// NoCache turns the cache layer off: every read goes to the site.
	NoCache bool
	// MinRevisit is the least time between two reads of one URL from the site: a re-read sooner
	// than that is answered from the cache even when the stored copy is stale. 0: RFC 9111 alone
	// decides. robots.txt, sitemaps, llms.txt and feeds are always revalidated.
	MinRevisit time.Duration

	// Cookies declares the purpose that needs cookies; nil (the default) means stateless: no
	// Cookie header is ever sent and no Set-Cookie is ever kept.
	Cookies *cookies.Purpose

	// Clock decides when requests start. nil means the process-wide clock, so that every door,
	// collector and clone in the process shares one budget per origin. A UserTriggered door may
	// share a crawl's clock and keeper, Redis-backed ones included: they hold the site's budget
	// and robots.txt, not the person's content.
	Clock hostclock.Clock
	// Robots keeps robots.txt per origin. nil means the process-wide keeper.
	Robots *robots.Keeper

	// Events receives every decision of the door; nil means a private bus (see [Door.Events]).
	Events *events.Bus
	// Logger receives one record per decision of the door: pauses, slowdowns and refusals at
	// Info, waits, retries, responses and cache outcomes at Debug, and at Warn what changes the
	// crawl beyond one request (a host given up, a body cut, …). nil means warnings and errors
	// only, on slog.Default(): a scraper's output stays its own.
	Logger *slog.Logger

	// Proxy chooses a proxy per request (as http.Transport.Proxy). Colly's SetProxy and
	// SetProxyFunc would replace the door, so proxies are configured here.
	Proxy func(*http.Request) (*url.URL, error)
	// BaseTransport is the transport at the bottom of the door; nil means a clone of
	// http.DefaultTransport. The door uses a clone of it, with its ProxyConnectHeader set (so
	// proxy CONNECTs identify) and, when Proxy is set, its Proxy.
	BaseTransport *http.Transport

	// AllowPrivateRedirects turns off the private-network check: by default a redirect hop that
	// leaves a public address for a loopback, private (RFC 1918, RFC 4193), link-local, CGNAT
	// (100.64.0.0/10) or unspecified one is refused (reason "private-network"), because a site
	// on the internet must not be able to point the crawler at the network it runs in. The
	// check is made on the address the dial resolved, so DNS rebinding cannot get around it. It
	// never refuses the caller's own URLs, a hop within one network (loopback to loopback,
	// 10.x to 10.x) or a hop sent through Policy.Proxy.
	AllowPrivateRedirects bool

	// MaxBodyBytes overrides the body cap per kind (see [DefaultMaxBodyBytes]), except for
	// kind.Robots: a robots.txt is read up to robots.MaxBytes, the parser's limit, always.
	MaxBodyBytes map[kind.Kind]int64

	// SignKey turns on Web Bot Auth request signing (package webbotauth): every request that
	// goes out is signed with this Ed25519 key. nil (the default) signs nothing.
	SignKey ed25519.PrivateKey
	// SignatureAgent is the https URL of the key directory that publishes SignKey's public half;
	// empty means the well-known directory at the origin of Identity.InfoURL, which then must
	// be https.
	SignatureAgent string
	// SignatureExpiry is how long each signature is valid; 0 means webbotauth.DefaultExpiry
	// (5 minutes), at most 24 hours.
	SignatureExpiry time.Duration
}

// DefaultRate is the default number of request starts per second per budget key; the host clock
// holds the rule ([hostclock.DefaultRate]).
const DefaultRate = hostclock.DefaultRate

// DefaultConcurrency is the default cap of requests in flight per budget key
// ([hostclock.DefaultConcurrency]).
const DefaultConcurrency = hostclock.DefaultConcurrency

// DefaultTimeout bounds one request from the grant of its slot.
const DefaultTimeout = 30 * time.Second

// DefaultMaxWait is how long a UserTriggered request waits for its origin's turn at most
// (Policy.MaxWait): a person is waiting.
const DefaultMaxWait = 10 * time.Second

// DefaultMaxBodyBytes returns the body cap of kind k: robots.MaxBytes (512 KiB) for robots.txt,
// the most the parser reads (RFC 9309 §2.5 asks for at least 500 KiB); kind.SitemapMaxBytes
// (50 MiB, the sitemaps.org limit) for sitemaps; 50 MiB for other kinds; 10 MiB for pages,
// llms.txt, feeds and API responses. A body longer than its cap is cut there and the read fails
// with a [*BodyTooLargeError], so truncation is never silent. Bodies are counted after content
// decoding, which bounds decompression too.
func DefaultMaxBodyBytes(k kind.Kind) int64 {
	switch k {
	case kind.Robots:
		return robots.MaxBytes
	case kind.Sitemap:
		return kind.SitemapMaxBytes
	case kind.Other:
		return 50 << 20
	}
	return 10 << 20
}

func (p Policy) rate() float64 {
	if p.Rate <= 0 {
		return DefaultRate
	}
	return p.Rate
}

func (p Policy) concurrency() int {
	if p.Concurrency <= 0 {
		return DefaultConcurrency
	}
	return p.Concurrency
}

func (p Policy) timeout() time.Duration {
	if p.Timeout <= 0 {
		return DefaultTimeout
	}
	return p.Timeout
}

func (p Policy) maxWait() time.Duration {
	if p.MaxWait <= 0 {
		return DefaultMaxWait
	}
	return p.MaxWait
}

func (p Policy) maxBody(k kind.Kind) int64 {
	if k == kind.Robots {
		return robots.MaxBytes // what the parser reads, whatever the map says
	}
	if n, ok := p.MaxBodyBytes[k]; ok && n > 0 {
		return n
	}
	return DefaultMaxBodyBytes(k)
}

// reading says which robots.txt groups decide the door's requests, and agent is the User-Agent
// sent.
func (p Policy) reading() robots.Reading {
	if p.Mode == UserTriggered {
		return robots.ForUserTriggered(p.Identity.UserTriggeredToken(), p.Identity.CrawlToken(), p.StrictRobots)
	}
	return robots.ForCrawler(p.Identity.CrawlToken())
}

func (p Policy) agent() string {
	if p.Mode == UserTriggered {
		return p.Identity.UserTriggeredAgent()
	}
	return p.Identity.UserAgent()
}

// logger is the door's logger: Policy.Logger, else slog.Default() for warnings and errors only.
func (p Policy) logger() *slog.Logger { return quietlog.Or(p.Logger) }

// cacheStore returns the store the door caches in (see Policy.CacheStore).
func (p Policy) cacheStore(logger *slog.Logger) (cache.Store, error) {
	if p.Mode == UserTriggered {
		// Nothing of a person's fetch outlives the session: no disk, no shared store.
		switch p.CacheStore.(type) {
		case nil:
			return cache.NewMemoryStore(0), nil
		case *cache.MemoryStore:
			return p.CacheStore, nil
		}
		return nil, fmt.Errorf("etiquette: a user-triggered door keeps nothing past the session, so its cache stays in memory: "+
			"leave Policy.CacheStore nil or pass a *cache.MemoryStore (got %T), or set NoCache", p.CacheStore)
	}
	if p.CacheStore != nil {
		return p.CacheStore, nil
	}
	dir, err := cache.DefaultDir()
	if err != nil {
		logger.Warn("etiquette: no user cache directory; caching in memory for this process", "err", err)
		return cache.NewMemoryStore(0), nil
	}
	return processDiskStore(dir, logger)
}

// processDiskStores holds the disk store of each default cache directory the process opened. A
// store is process-wide for the doors that use the default, so that they keep one index of the
// directory in memory and append to one segment file, rather than one each (a scraper building a
// collector per job would otherwise hold an index and open files per collector). The first door
// to open a directory gives the store its logger.
var processDiskStores = struct {
	sync.Mutex
	byDir map[string]*cache.DiskStore
}{byDir: map[string]*cache.DiskStore{}}

// processDiskStore returns the process-wide disk store of dir, opening it on first use.
func processDiskStore(dir string, logger *slog.Logger) (*cache.DiskStore, error) {
	processDiskStores.Lock()
	defer processDiskStores.Unlock()
	if s, ok := processDiskStores.byDir[dir]; ok {
		return s, nil
	}
	s, err := cache.NewDiskStore(dir, cache.DiskOptions{Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("etiquette: opening the cache in %s (set Policy.CacheStore or NoCache): %w", dir, err)
	}
	processDiskStores.byDir[dir] = s
	return s, nil
}

// processKeeper is the robots.txt keeper of every door built without Policy.Robots. It is
// process-wide for the reason the host clock is (hostclock.Shared): the site pays for the crawler
// as a whole, so every door, collector and clone of the process asks for an origin's robots.txt
// once and obeys the same copy.
var processKeeper = sync.OnceValue(func() *robots.Keeper { return robots.NewKeeper(robots.Options{}) })

// keeper returns the robots.txt keeper of the door: Policy.Robots, else the process-wide one.
func (p Policy) keeper() *robots.Keeper {
	if p.Robots != nil {
		return p.Robots
	}
	return processKeeper()
}

// jar returns the purpose-bound cookie jar, or nil without a purpose. The door's cookie layer
// reports what the jar refuses (cookieDoor.responses); the jar's own records go to logger.
func (p Policy) jar(logger *slog.Logger) (*cookies.Jar, error) {
	if p.Cookies == nil {
		return nil, nil
	}
	jar, err := cookies.NewJar(*p.Cookies, cookies.Options{Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("etiquette: cookie purpose: %w", err)
	}
	return jar, nil
}

// baseTransport returns the transport at the bottom of the door: a clone of Policy.BaseTransport
// (else of http.DefaultTransport) with Policy.Proxy, and the User-Agent on proxy CONNECTs, which
// carry no request header of ours (without it they say Go-http-client).
func (p Policy) baseTransport() *http.Transport {
	base := p.BaseTransport
	if base == nil {
		base = http.DefaultTransport.(*http.Transport)
	}
	base = base.Clone()
	if p.Proxy != nil {
		base.Proxy = p.Proxy
	}
	agent := p.agent()
	if base.ProxyConnectHeader == nil {
		base.ProxyConnectHeader = http.Header{}
	}
	base.ProxyConnectHeader.Set("User-Agent", agent)
	if get := base.GetProxyConnectHeader; get != nil {
		// A transport that computes its CONNECT headers would otherwise replace ours.
		base.GetProxyConnectHeader = func(ctx context.Context, proxyURL *url.URL, target string) (http.Header, error) {
			h, err := get(ctx, proxyURL, target)
			// The function may hand out a map it shares; set ours on a copy.
			h = h.Clone()
			if h == nil {
				h = http.Header{}
			}
			h.Set("User-Agent", agent)
			return h, err
		}
	}
	return base
}

// Signer returns the request signer the door uses, or nil when SignKey is nil (signing is off).
// It fails when SignatureAgent is empty and Identity.InfoURL is not https, when SignatureAgent
// is not https, or when SignatureExpiry is out of range.
func (p Policy) Signer() (*webbotauth.Signer, error) {
	if p.SignKey == nil {
		return nil, nil
	}
	s, err := webbotauth.NewSigner(p.SignKey, webbotauth.SignerOptions{Agent: p.SignatureAgent,
		InfoURL: p.Identity.InfoURL, Expiry: p.SignatureExpiry})
	switch {
	case errors.Is(err, webbotauth.ErrAgentNotHTTPS):
		return nil, fmt.Errorf("etiquette: Policy.SignKey is set, but %w; serve Identity.InfoURL over https or set Policy.SignatureAgent to the https URL of your key directory", err)
	case err != nil:
		return nil, fmt.Errorf("etiquette: request signing (Policy.SignKey, Policy.SignatureExpiry): %w", err)
	}
	return s, nil
}
