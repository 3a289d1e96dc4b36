package main

// This file decides how crawl's flags become a door policy: the identity, the rate and
// concurrency (by hostclock's rule), the cache, the cookie purpose and the proxy.

import (
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/politecrawl/etiquette/cookies"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/hostclock"
)

// crawlOptions are crawl's flags.
type crawlOptions struct {
	idf         identityFlags
	rate        float64
	authorized  authorizedRates
	concurrency int
	maxPages    int
	maxDepth    int
	cacheDir    string
	noCache     bool
	redis       string
	cookiesFor  string
	allowCookie multiFlag
	proxy       string
}

func (o *crawlOptions) register(fs *flag.FlagSet) {
	o.authorized = authorizedRates{}
	o.idf.register(fs)
	fs.Float64Var(&o.rate, "rate", hostclock.DefaultRate, "`R`: request starts per second per host; above 3 only for the hosts named in --authorized-rate")
	fs.Var(o.authorized, "authorized-rate", "`HOST[:PORT]=R`: the operator of HOST allowed R request starts per second (repeatable)")
	fs.IntVar(&o.concurrency, "concurrency", hostclock.DefaultConcurrency, "`N`: requests in flight per host")
	fs.IntVar(&o.maxPages, "max-pages", 0, "`N`: stop after N pages (0: no limit)")
	fs.IntVar(&o.maxDepth, "max-depth", 0, "`N`: follow links N deep (0: no limit)")
	fs.StringVar(&o.cacheDir, "cache-dir", "", "`DIR`: the cache directory (default: the user cache directory's etiquette folder)")
	fs.BoolVar(&o.noCache, "no-cache", false, "do not cache: every read goes to the site")
	fs.StringVar(&o.redis, "redis", "", "`URL`: "+notYet+"share the budget across processes through this Redis server")
	fs.StringVar(&o.cookiesFor, "cookies-for", "", "`CATEGORIES`: the cookie categories the task needs, of session,loadbalancer,csrf (default: no cookies)")
	fs.Var(&o.allowCookie, "allow-cookie", "`NAME`: a cookie the task needs besides the categories (repeatable)")
	fs.StringVar(&o.proxy, "proxy", "", "`URL`: send every request through this proxy")
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

// policy turns the flags into a door policy; every problem is a usage error.
func (o *crawlOptions) policy(e env) (politeness.Policy, error) {
	id, err := o.idf.identity(e.getenv, e.warn)
	if err != nil {
		return politeness.Policy{}, err
	}
	if o.redis != "" {
		return politeness.Policy{}, errNotYet("--redis")
	}
	clock, err := o.clock()
	if err != nil {
		return politeness.Policy{}, err
	}
	p := politeness.Policy{Identity: id, Clock: clock, NoCache: o.noCache}
	if !o.noCache {
		store, err := openCacheStore(o.cacheDir)
		if err != nil {
			return p, err
		}
		p.CacheStore = store
	}
	if o.cookiesFor != "" || len(o.allowCookie) > 0 {
		purpose, err := cookiePurpose(o.cookiesFor, o.allowCookie)
		if err != nil {
			return p, err
		}
		p.Cookies = purpose
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

// clock builds the crawl's budget: the crawl is the process, so its clock is built from the
// flags. The rate rule is hostclock's — NewLocal refuses a rate above DefaultRate, which only an
// operator's authorisation lifts for the hosts it names — and the command words the refusal in
// flags. With --authorized-rate, a --rate above the default applies to the named hosts only.
func (o *crawlOptions) clock() (*hostclock.Local, error) {
	if o.concurrency < 1 {
		return nil, usagef("--concurrency %d: want 1 or more", o.concurrency)
	}
	if !(o.rate > 0) {
		return nil, usagef("--rate %g: want a positive number of requests per second", o.rate)
	}
	cfg := hostclock.Config{Rate: o.rate, Authorized: o.authorized, Concurrency: o.concurrency}
	if len(o.authorized) > 0 {
		cfg.Rate = min(o.rate, hostclock.DefaultRate)
	}
	clock, err := hostclock.NewLocal(cfg)
	switch {
	case err != nil && len(o.authorized) == 0:
		return nil, usagef("--rate %g is above %d requests per second per host: name the hosts whose operators allowed more with --authorized-rate HOST[:PORT]=R", o.rate, hostclock.DefaultRate)
	case err != nil:
		return nil, usagef("--authorized-rate: %v", err)
	}
	return clock, nil
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
