package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/cookies"
	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/origin"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// drainTime is how long requests already on the wire may finish after SIGINT.
const drainTime = 3 * time.Second

// line is one JSON object of crawl's output: a URL the crawl decided about.
type line struct {
	URL      string `json:"url"`
	FinalURL string `json:"final_url,omitempty"`
	Status   int    `json:"status,omitempty"`
	Kind     string `json:"kind"`
	FoundVia string `json:"found_via"`
	Cache    string `json:"cache,omitempty"`
	Bytes    int64  `json:"bytes"`
	Refused  string `json:"refused,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// authorizedRates collects --authorized-rate HOST[:PORT]=R flags.
type authorizedRates map[string]float64

func (a authorizedRates) String() string { return fmt.Sprint(map[string]float64(a)) }

func (a authorizedRates) Set(s string) error {
	host, r, ok := strings.Cut(s, "=")
	rate, err := strconv.ParseFloat(r, 64)
	if !ok || host == "" || err != nil || rate <= 0 {
		return fmt.Errorf("want HOST[:PORT]=RATE, e.g. example.org=5 (got %q)", s)
	}
	u, err := url.Parse("http://" + host)
	if err != nil {
		return fmt.Errorf("host %q: %v", host, err)
	}
	key, err := origin.BudgetKey(u)
	if err != nil {
		return fmt.Errorf("host %q: %v", host, err)
	}
	a[key] = rate
	return nil
}

// multiFlag collects a repeated string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

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

func runCrawl(ctx context.Context, args []string, e env) (int, error) {
	o := crawlOptions{authorized: authorizedRates{}}
	fs := newFlagSet("crawl", e)
	o.idf.register(fs)
	fs.Float64Var(&o.rate, "rate", politeness.DefaultRate, "request starts per second per host (above 3 only with --authorized-rate)")
	fs.Var(o.authorized, "authorized-rate", "HOST[:PORT]=R: the operator of HOST allowed R requests per second (repeatable)")
	fs.IntVar(&o.concurrency, "concurrency", politeness.DefaultConcurrency, "requests in flight per host")
	fs.IntVar(&o.maxPages, "max-pages", 0, "stop after this many pages (0: no limit)")
	fs.IntVar(&o.maxDepth, "max-depth", 0, "follow links this deep (0: no limit)")
	fs.StringVar(&o.cacheDir, "cache-dir", "", "cache directory (default: the user cache directory's etiquette folder)")
	fs.BoolVar(&o.noCache, "no-cache", false, "do not cache: every read goes to the site")
	fs.StringVar(&o.redis, "redis", "", "Redis URL to share the budget across processes")
	fs.StringVar(&o.cookiesFor, "cookies-for", "", "cookie classes the task needs: session,loadbalancer,csrf (default: no cookies)")
	fs.Var(&o.allowCookie, "allow-cookie", "a cookie name the task needs besides the classes (repeatable)")
	fs.StringVar(&o.proxy, "proxy", "", "proxy URL")
	starts, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage, err
	}
	if len(starts) == 0 {
		return exitUsage, usagef("usage: etiquette crawl IDENTITY-FLAGS [flags] URL...")
	}
	policy, err := o.policy(e)
	if err != nil {
		return exitUsage, err
	}
	var startURLs []*url.URL
	scope := map[string]bool{}
	for _, s := range starts {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return exitUsage, usagef("start URL %q: want an absolute http(s) URL", s)
		}
		k, _ := origin.RobotsKey(u)
		scope[k] = true
		startURLs = append(startURLs, u)
	}

	bus := &events.Bus{}
	policy.Events = bus
	out := newCrawlOutput(e)
	bus.Subscribe(out.event)

	// The collector's context outlives an interrupt by drainTime, so that requests already on the
	// wire may finish; door.Stop cancels everything that still waits.
	crawlCtx, abort := context.WithCancel(context.WithoutCancel(ctx))
	defer abort()
	c := colly.NewCollector(colly.MaxDepth(o.maxDepth), colly.Async(true), colly.StdlibContext(crawlCtx))
	door, err := extensions.Install(c, policy)
	if err != nil {
		return exitUsage, err
	}
	// No Colly LimitRule: its parallelism is shared by every host a rule matches; the door's
	// host clock decides the pace per origin, and a request waiting for its turn holds no slot.

	var pagesMu sync.Mutex
	pages := 0
	c.OnRequest(func(r *colly.Request) {
		if o.maxPages > 0 {
			pagesMu.Lock()
			over := pages >= o.maxPages
			if !over {
				pages++
			}
			pagesMu.Unlock()
			if over {
				r.Abort()
				return
			}
		}
		if r.Ctx.Get("url") == "" {
			r.Ctx.Put("url", r.URL.String())
		}
	})
	c.OnResponse(func(r *colly.Response) {
		out.page(r.Request.Ctx.Get("url"), r.Request.URL.String(), r.StatusCode, r.Request.Ctx.Get("via"), int64(len(r.Body)))
	})
	c.OnError(func(r *colly.Response, err error) {
		orig := r.Request.Ctx.Get("url")
		if orig == "" {
			orig = r.Request.URL.String()
		}
		if r.StatusCode != 0 {
			out.page(orig, r.Request.URL.String(), r.StatusCode, r.Request.Ctx.Get("via"), int64(len(r.Body)))
			return
		}
		out.refused(orig, r.Request.Ctx.Get("via"), err)
	})
	nofollow := func(r *colly.Response) bool {
		return hasNofollow(r.Headers.Values("X-Robots-Tag"))
	}
	c.OnHTML(`meta[name="robots" i]`, func(el *colly.HTMLElement) {
		if hasNofollow([]string{el.Attr("content")}) {
			el.Request.Ctx.Put("nofollow", "1")
		}
	})
	c.OnHTML("a[href]", func(el *colly.HTMLElement) {
		if el.Request.Ctx.Get("nofollow") != "" || nofollow(el.Response) || strings.Contains(strings.ToLower(el.Attr("rel")), "nofollow") {
			return
		}
		u, err := url.Parse(el.Request.AbsoluteURL(el.Attr("href")))
		if err != nil {
			return
		}
		if k, err := origin.RobotsKey(u); err != nil || !scope[k] {
			return
		}
		u.Fragment = ""
		ctx := colly.NewContext()
		ctx.Put("via", "link")
		ctx.Put("url", u.String())
		_ = c.Request(http.MethodGet, u.String(), nil, ctx, nil)
	})

	fmt.Fprintf(e.stderr, "etiquette: crawling %d start URL(s) as %q\n", len(startURLs), door.UserAgent())
	for _, u := range startURLs {
		cctx := colly.NewContext()
		cctx.Put("via", "start")
		cctx.Put("url", u.String())
		if err := c.Request(http.MethodGet, u.String(), nil, cctx, nil); err != nil {
			out.refused(u.String(), "start", err)
		}
	}
	finished := make(chan struct{})
	go func() { c.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-ctx.Done():
		door.Stop()
		select {
		case <-finished:
		case <-time.After(drainTime):
			abort()
			<-finished
		}
	}
	out.summary(door.Stats(), ctx.Err() != nil)
	if ctx.Err() != nil {
		return exitInterrupted, nil
	}
	if out.pages() == 0 {
		return exitNo, errors.New("no page could be fetched; the lines on stdout say why")
	}
	return exitOK, nil
}

// policy turns the flags into a door policy; every problem is a usage error.
func (o *crawlOptions) policy(e env) (politeness.Policy, error) {
	id, err := o.idf.identity(e.getenv, func(s string) { fmt.Fprintln(e.stderr, s) })
	if err != nil {
		return politeness.Policy{}, err
	}
	if o.redis != "" {
		return politeness.Policy{}, errNotYet("--redis")
	}
	if o.concurrency < 1 {
		return politeness.Policy{}, usagef("--concurrency %d: want 1 or more", o.concurrency)
	}
	if o.rate <= 0 {
		return politeness.Policy{}, usagef("--rate %g: want a positive number of requests per second", o.rate)
	}
	if o.rate > politeness.DefaultRate && len(o.authorized) == 0 {
		return politeness.Policy{}, usagef("--rate %g is above %d requests per second per host: name the hosts whose operators allowed more with --authorized-rate HOST[:PORT]=R", o.rate, politeness.DefaultRate)
	}
	// The crawl is the process: its clock is the budget, built from the flags (a rate above 3
	// only for the hosts named in --authorized-rate).
	clock, err := hostclock.NewLocal(hostclock.Config{Rate: min(o.rate, politeness.DefaultRate), Authorized: o.authorized, Concurrency: o.concurrency})
	if err != nil {
		return politeness.Policy{}, usagef("%v", err)
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

func hasNofollow(values []string) bool {
	for _, v := range values {
		for _, part := range strings.Split(strings.ToLower(v), ",") {
			part = strings.TrimSpace(part)
			// X-Robots-Tag may name a bot first ("otherbot: nofollow"); any nofollow is honoured.
			if part == "nofollow" || part == "none" || strings.HasSuffix(part, ": nofollow") || strings.HasSuffix(part, ":nofollow") {
				return true
			}
		}
	}
	return false
}

// crawlOutput writes crawl's JSON lines and keeps what the summary needs.
type crawlOutput struct {
	mu        sync.Mutex
	enc       *json.Encoder
	stderr    io.Writer
	responses map[string]events.Event // URL → its last Response event, until its line is written
	lines     int
	pagesSeen int // lines of pages that got a response
	refusals  map[string]int
}

func newCrawlOutput(e env) *crawlOutput {
	return &crawlOutput{enc: json.NewEncoder(e.stdout), stderr: e.stderr, responses: map[string]events.Event{}, refusals: map[string]int{}}
}

func (o *crawlOutput) write(l line) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lines++
	if l.Refused != "" {
		o.refusals[l.Refused]++
	}
	_ = o.enc.Encode(l)
}

// event receives the door's stream: responses to requests the door made itself (robots.txt)
// become lines of their own; the others leave their cache outcome for the page's line.
func (o *crawlOutput) event(ev events.Event) {
	if ev.Type == events.Refused && ev.Kind == kind.Robots {
		// robots.txt itself could not be fetched (network error, timeout, too many redirects).
		o.write(line{URL: ev.URL, Kind: string(ev.Kind), FoundVia: "door", Refused: "error", Reason: ev.Detail})
		return
	}
	if ev.Type != events.Response {
		return
	}
	if ev.Kind == kind.Robots {
		o.write(line{URL: ev.URL, Status: ev.Status, Kind: string(ev.Kind), FoundVia: "door", Cache: ev.Cache, Bytes: ev.Bytes})
		return
	}
	o.mu.Lock()
	o.responses[ev.URL] = ev
	o.mu.Unlock()
}

// pages counts the pages that got a response (of any status).
func (o *crawlOutput) pages() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.pagesSeen
}

func (o *crawlOutput) page(u, final string, status int, via string, n int64) {
	o.mu.Lock()
	o.pagesSeen++
	ev, ok := o.responses[final]
	delete(o.responses, final) // read once: the map holds only responses not yet written
	o.mu.Unlock()
	k := string(kind.HTML)
	if ok {
		k = string(ev.Kind)
	}
	l := line{URL: u, Status: status, Kind: k, FoundVia: via, Cache: ev.Cache, Bytes: n}
	if final != u {
		l.FinalURL = final
	}
	o.write(l)
}

func (o *crawlOutput) refused(u, via string, err error) {
	l := line{URL: u, Kind: string(kind.HTML), FoundVia: via, Refused: "error", Reason: err.Error()}
	var dis *robots.DisallowedError
	var gone *hostclock.GiveUpError
	switch {
	case errors.As(err, &dis):
		l.Refused = "robots"
	case errors.As(err, &gone):
		l.Refused = "budget"
	case errors.Is(err, politeness.ErrStopped):
		l.Reason = "interrupted before it was sent"
	}
	o.write(l)
}

func (o *crawlOutput) summary(s politeness.StatsSnapshot, interrupted bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if interrupted {
		fmt.Fprintln(o.stderr, "etiquette: interrupted; stopped admitting requests")
	}
	fmt.Fprintf(o.stderr, "etiquette: %d URLs decided, %d responses, %d bytes\n", o.lines, s.Responses, s.Bytes)
	fmt.Fprintf(o.stderr, "  refused: %s\n", counts(o.refusals))
	fmt.Fprintf(o.stderr, "  cache:   %s; %d body bytes the site did not send\n", counts(s.Cache), s.CacheBytesSaved)
	fmt.Fprintf(o.stderr, "  waits:   %s; pauses %d; retries %d\n", counts(s.Waits), s.Pauses, s.Retries)
	fmt.Fprintf(o.stderr, "  cookies refused: %s\n", counts(s.CookiesRefused))
}

func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
