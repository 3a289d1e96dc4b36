package main

// This file decides how crawl's flags become a door policy — the identity, the rate and
// concurrency (by hostclock's rule), the cache, the cookie purpose, the signing key, the proxy
// and the Redis server the crawl is shared through; info-page shares the policy flags — and which
// of crawl's limits are usable.

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/politecrawl/etiquette/cookies"
	"github.com/politecrawl/etiquette/crawler"
	"github.com/politecrawl/etiquette/discovery/plan"
	"github.com/politecrawl/etiquette/frontier"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/robots"
	"github.com/politecrawl/etiquette/politeness/webbotauth"
	"github.com/politecrawl/etiquette/report"
)

// policyFlags are the flags that make the door's policy: who the crawler is, its pace, whether it
// caches, the cookies it keeps and the key it signs with. crawl and info-page register them
// through one register, so the page describes the crawl the same flags run.
type policyFlags struct {
	idf            identityFlags
	rate           float64
	authorized     authorizedRates
	concurrency    int
	latencyFactor  float64
	noCache        bool
	cookiesFor     string
	allowCookie    multiFlag
	signKey        string
	signatureAgent string

	log *crawlLog // where the clock and the door log; nil: warnings on slog's default logger
}

func (o *policyFlags) register(fs *flag.FlagSet) {
	o.authorized = authorizedRates{}
	o.idf.register(fs)
	fs.Float64Var(&o.rate, "rate", hostclock.DefaultRate, "`R`: request starts per second per host; above 3 only for the hosts named in --authorized-rate")
	fs.Var(o.authorized, "authorized-rate", "`HOST[:PORT]=R`: the operator of HOST allowed R request starts per second (repeatable)")
	fs.IntVar(&o.concurrency, "concurrency", hostclock.DefaultConcurrency, "`N`: requests in flight per host")
	fs.Float64Var(&o.latencyFactor, "latency-factor", hostclock.DefaultLatencyFactor, "`F`: space an origin's starts at least F times its smoothed response time, so a slow server gets a slower crawl (a negative F turns this off)")
	fs.BoolVar(&o.noCache, "no-cache", false, "do not cache: every read goes to the site")
	fs.StringVar(&o.cookiesFor, "cookies-for", "", "`CATEGORIES`: the cookie categories the task needs, of session,loadbalancer,csrf (default: no cookies)")
	fs.Var(&o.allowCookie, "allow-cookie", "`NAME`: a cookie the task needs besides the categories (repeatable)")
	fs.StringVar(&o.signKey, "sign-key", "", "`FILE`: sign every request with this Ed25519 key (Web Bot Auth, RFC 9421): PKCS#8 PEM, mode 0600, as 'etiquette keys generate' writes it")
	fs.StringVar(&o.signatureAgent, "signature-agent", "", "`URL`: the https URL of the key directory that publishes --sign-key's public half (default: the --info-url's origin + "+webbotauth.WellKnownPath+")")
}

// policy turns the flags into a door policy without a cache store (the caller opens one if it
// sends requests); every problem is a usage error. The rate fields are set besides the clock, so
// the policy describes itself (infopage reads them; the door follows the clock).
func (o *policyFlags) policy(e env) (politeness.Policy, error) {
	id, err := o.idf.identity(e.getenv, e.warn)
	if err != nil {
		return politeness.Policy{}, err
	}
	return o.policyFor(id)
}

// policyFor is policy with an identity the caller chose (demo's) instead of the identity flags'.
func (o *policyFlags) policyFor(id identity.Identity) (politeness.Policy, error) {
	clock, cfg, err := o.clock()
	if err != nil {
		return politeness.Policy{}, err
	}
	// A keeper of the command's own, like its clock: one command is one crawl, and tests that run
	// many commands in one process must not see robots.txt kept for an earlier test's server on a
	// port the system has since handed to another (the process-wide keeper would serve it).
	p := politeness.Policy{Identity: id, Clock: clock, Robots: robots.NewKeeper(robots.Options{}), Rate: cfg.Rate, Concurrency: cfg.Concurrency,
		LatencyFactor: cfg.LatencyFactor, NoCache: o.noCache, Logger: o.logger()}
	if len(o.authorized) > 0 {
		p.AuthorizedRates = o.authorized
	}
	if o.cookiesFor != "" || len(o.allowCookie) > 0 {
		if p.Cookies, err = cookiePurpose(o.cookiesFor, o.allowCookie); err != nil {
			return p, err
		}
	}
	switch {
	case o.signKey != "":
		if p.SignKey, err = webbotauth.LoadKey(o.signKey); err != nil {
			return p, usagef("--sign-key: %v", err)
		}
		p.SignatureAgent = o.signatureAgent
		if _, err := p.Signer(); err != nil {
			return p, signingFlagError(err, id.InfoURL, o.signatureAgent)
		}
	case o.signatureAgent != "":
		return p, usagef("--signature-agent %q needs --sign-key FILE: the key whose public half the directory publishes", o.signatureAgent)
	}
	return p, nil
}

// signingFlagError says in flags why signing cannot start.
func signingFlagError(err error, infoURL, agent string) error {
	switch {
	case !errors.Is(err, webbotauth.ErrAgentNotHTTPS):
		return usagef("--sign-key: %v", err)
	case agent != "":
		return usagef("--signature-agent %q: the key directory must be an https URL", agent)
	}
	return usagef("--sign-key: the key directory must be served over https, but --info-url %q is not https; serve the info page over https or give --signature-agent https://HOST%s", infoURL, webbotauth.WellKnownPath)
}

// crawlOptions are crawl's flags: the policy's, then how the crawl runs.
type crawlOptions struct {
	policyFlags
	workers  int
	maxQueue int
	maxPages int
	maxDepth int
	cacheDir string
	proxy    string
	redisFlags

	reportDir  string // --report: write the report directory here
	wantReport bool   // return the report figures even without a directory (demo)
	// reportNames are what the demo adds to the report and the progress line: the origins' names,
	// the page's opening sentences, the rates an earlier pass left them at.
	reportNames report.Options

	noDiscovery    bool
	noSitemapGuess bool
	llmsFull       bool
	lastmodTrust   time.Duration
}

func (o *crawlOptions) register(fs *flag.FlagSet) {
	o.policyFlags.register(fs)
	fs.IntVar(&o.workers, "workers", crawler.DefaultWorkers, "`N`: requests in progress at once, across all origins")
	fs.IntVar(&o.maxQueue, "max-queue", frontier.DefaultMaxQueued, "`N`: URLs queued per origin, and links taken from one page; more are dropped and counted in the summary")
	fs.IntVar(&o.maxPages, "max-pages", 0, "`N`: stop after N pages got a response, of any status; the URLs still queued are reported not fetched (0: no limit)")
	fs.IntVar(&o.maxDepth, "max-depth", 0, "`N`: fetch pages of depth N at most: start URLs are depth 1, the links on a depth-d page d+1 (0: no limit)")
	fs.StringVar(&o.cacheDir, "cache-dir", "", "`DIR`: the cache directory (default: the user cache directory's etiquette folder)")
	o.redisFlags.register(fs)
	fs.StringVar(&o.proxy, "proxy", "", "`URL`: send every request through this proxy")
	fs.StringVar(&o.reportDir, "report", "", "`DIR`: write a report of what the crawl did to each origin: DIR/"+report.HTMLFile+" and the door's events, DIR/"+report.EventsFile+"; the same figures go to stderr as text, as the demo prints them")
	fs.BoolVar(&o.noDiscovery, "no-discovery", false, "follow HTML links only: do not read robots.txt's sitemaps, /sitemap.xml, llms.txt, feeds and APIs first")
	fs.BoolVar(&o.noSitemapGuess, "no-sitemap-guess", false, "do not try /sitemap.xml at an origin whose robots.txt names no sitemap")
	fs.BoolVar(&o.llmsFull, "llms-full", false, "read /llms-full.txt too, also when llms.txt does not link it")
	fs.DurationVar(&o.lastmodTrust, "lastmod-trust", crawler.DefaultLastmodTrust, "`D`: answer a page from the cache without asking the site when a sitemap, feed or API dates it before the cached copy and that copy is younger than D (0: always ask)")
}

// discovery returns what the crawl reads before its HTML crawl, or nil with --no-discovery. With
// --redis one process reads each origin's documents (see discoveryClaims).
func (o *crawlOptions) discovery() *plan.Options {
	if o.noDiscovery {
		return nil
	}
	return &plan.Options{NoSitemapGuess: o.noSitemapGuess, LLMsFull: o.llmsFull}
}

// lastmodTrustOption is --lastmod-trust as crawler.Config takes it: 0 turns it off there.
func (o *crawlOptions) lastmodTrustOption() time.Duration {
	if o.lastmodTrust == 0 {
		return -1
	}
	return o.lastmodTrust
}

// checkRun refuses limits the crawl cannot run with.
func (o *crawlOptions) checkRun() error {
	switch {
	case o.workers < 1:
		return usagef("--workers %d: want 1 or more", o.workers)
	case o.maxQueue < 1:
		return usagef("--max-queue %d: want 1 or more", o.maxQueue)
	case o.maxPages < 0:
		return usagef("--max-pages %d: want 0 (no limit) or more", o.maxPages)
	case o.maxDepth < 0:
		return usagef("--max-depth %d: want 0 (no limit) or more", o.maxDepth)
	case o.lastmodTrust < 0:
		return usagef("--lastmod-trust %s: want 0 (always ask) or a positive duration such as 168h", o.lastmodTrust)
	}
	return nil
}

// authorizedRates collects --authorized-rate HOST[:PORT]=R flags, as written: hostclock
// normalises the hosts and refuses what is not a host.
type authorizedRates map[string]float64

func (a authorizedRates) String() string { return fmt.Sprint(map[string]float64(a)) }

func (a authorizedRates) Set(s string) error {
	host, r, ok := strings.Cut(s, "=")
	rate, err := strconv.ParseFloat(r, 64)
	if !ok || host == "" || err != nil || !(rate > 0) {
		return fmt.Errorf("want HOST[:PORT]=RATE with a positive RATE, e.g. example.org=5 (got %q)", s)
	}
	a[host] = rate
	return nil
}

// multiFlag collects a repeated string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// policy turns the flags into the crawl's door policy: the policy flags', the cache store and the
// proxy; every problem is a usage error.
func (o *crawlOptions) policy(e env) (politeness.Policy, error) {
	p, err := o.policyFlags.policy(e)
	if err != nil {
		return p, err
	}
	if !o.noCache {
		if p.CacheStore, err = openCacheStore(o.cacheDir); err != nil {
			return p, err
		}
	}
	if o.redis != "" {
		_, cfg, err := o.clock()
		if err != nil {
			return p, err
		}
		if err := o.share(&p, cfg); err != nil {
			return p, err
		}
	}
	if o.proxy != "" {
		pu, err := url.Parse(o.proxy)
		if err != nil || pu.Host == "" {
			return p, usagef("--proxy %q: want a URL such as http://proxy.example:3128", o.proxy)
		}
		p.Proxy = http.ProxyURL(pu)
	}
	return p, nil
}

// logger is the logger of o.log, or nil without one.
func (o *policyFlags) logger() *slog.Logger {
	if o.log == nil {
		return nil
	}
	return o.log.logger()
}

// clock builds the crawl's budget: the crawl is the process, so its clock is built from the
// flags. The rate rule is hostclock's — NewLocal refuses a rate above DefaultRate, which only an
// operator's authorisation lifts for the hosts it names — and the command words the refusal in
// flags. With --authorized-rate, a --rate above the default applies to the named hosts only.
func (o *policyFlags) clock() (*hostclock.Local, hostclock.Config, error) {
	if o.concurrency < 1 {
		return nil, hostclock.Config{}, usagef("--concurrency %d: want 1 or more", o.concurrency)
	}
	if !(o.rate > 0) {
		return nil, hostclock.Config{}, usagef("--rate %g: want a positive number of requests per second", o.rate)
	}
	if o.latencyFactor == 0 {
		return nil, hostclock.Config{}, usagef("--latency-factor 0: want a positive factor, or a negative one to turn pacing by response time off")
	}
	cfg := hostclock.Config{Rate: o.rate, Authorized: o.authorized, Concurrency: o.concurrency, LatencyFactor: o.latencyFactor, Logger: o.logger()}
	if len(o.authorized) > 0 {
		cfg.Rate = min(o.rate, hostclock.DefaultRate)
	}
	clock, err := hostclock.NewLocal(cfg)
	switch {
	case err != nil && len(o.authorized) == 0:
		return nil, cfg, usagef("--rate %g is above %d requests per second per host: name the hosts whose operators allowed more with --authorized-rate HOST[:PORT]=R", o.rate, hostclock.DefaultRate)
	case err != nil:
		return nil, cfg, usagef("--authorized-rate: %v", err)
	}
	return clock, cfg, nil
}

// openCacheStore opens the crawl's disk cache: dir, or the user cache directory's etiquette
// folder when dir is empty. An unusable directory is a usage error (exit 2).
func openCacheStore(dir string) (cache.Store, error) {
	if dir == "" {
		d, err := cache.DefaultDir()
		if err != nil {
			return nil, usagef("%v; or pass --cache-dir DIR or --no-cache", err)
		}
		dir = d
	}
	s, err := cache.NewDiskStore(dir, cache.DiskOptions{})
	if err != nil {
		return nil, usagef("--cache-dir %s: %v", dir, err)
	}
	return s, nil
}

// cookiePurpose builds the cookie purpose of --cookies-for and --allow-cookie; the cookies
// package decides what is valid, the command names the flag.
func cookiePurpose(categories string, allow []string) (*cookies.Purpose, error) {
	cats, err := cookies.ParseCategories(categories)
	if err != nil {
		return nil, usagef("--cookies-for: %v", err)
	}
	p := &cookies.Purpose{Categories: cats, Allow: allow}
	if err := p.Validate(); err != nil {
		return nil, usagef("--allow-cookie: %s", strings.ReplaceAll(err.Error(), "Purpose.Allow", "--allow-cookie"))
	}
	return p, nil
}
