package etiquette_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/etiquettetest/matchers"
	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/backoff"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
)

// The host clock's specs time what a site's server sees. Each scenario takes several seconds of
// real time, so BeforeAll starts all of them at once and each It waits for its own; every
// scenario has its own sites and its own clock, so they cannot disturb each other's budgets.
// Bounds only ever allow for a loaded machine being slower, never faster.
var _ = Describe("the per-origin budget, as the site's server log sees it", Ordered, func() {
	var (
		oneOrigin   *hcFuture[hcLoad]
		manyOrigins *hcFuture[[]hcLoad]
		tooMany     *hcFuture[hcThrottled]
		dated       *hcFuture[hcDated]
		unavailable *hcFuture[hcUnavailable]
		crawlDelay  *hcFuture[[]time.Time]
		slowing     *hcFuture[hcSlowing]
	)

	BeforeAll(func() {
		oneOrigin = hcStart(func() hcLoad { return hcOneOriginManyClients(10 * time.Second) })
		manyOrigins = hcStart(func() []hcLoad { return hcManyOrigins(50, 6*time.Second) })
		tooMany = hcStart(hcTooManyRequests)
		dated = hcStart(hcRetryAfterDate)
		unavailable = hcStart(hcUnavailableWithoutRetryAfter)
		crawlDelay = hcStart(hcCrawlDelay)
		slowing = hcStart(func() hcSlowing { return hcSlowingDown(16 * time.Second) })
	})

	Describe("one origin hit for 10 s by 16 goroutines, two Colly collectors and a clone", func() {
		It("never lets a one-second window hold more than 3 arrivals", func() {
			l := oneOrigin.get()
			Expect(l.errs).To(BeEmpty())
			Expect(len(l.arrivals)).To(BeNumerically(">", 20))
			fmt.Fprintf(GinkgoWriter, "gaps between arrivals: %v\n", hcGaps(l.arrivals))
			Expect(l.reqs).To(matchers.StartAtMostPerSecond(3))
		})
		It("uses the budget: at least 2.5 arrivals per second on average (the margins leave 2.63)", func() {
			l := oneOrigin.get()
			Expect(hcRate(l.arrivals)).To(BeNumerically(">=", 2.5))
		})
		It("shares that one budget between every client of the process", func() {
			l := oneOrigin.get()
			for _, client := range []string{"goroutine", "collector1", "clone", "collector2"} {
				Expect(l.byClient).To(HaveKeyWithValue(client, BeNumerically(">", 0)), "requests from %s", client)
			}
		})
	})

	Describe("50 origins crawled in parallel", func() {
		It("keeps each origin within its budget", func() {
			for _, l := range manyOrigins.get() {
				Expect(l.errs).To(BeEmpty())
				Expect(l.reqs).To(matchers.StartAtMostPerSecond(3), "an origin with gaps %v", hcGaps(l.arrivals))
			}
		})
		It("lets the aggregate grow with the number of origins (at least 50 × 2.6 per second)", func() {
			total := 0.0
			for _, l := range manyOrigins.get() {
				total += hcRate(l.arrivals)
			}
			Expect(total).To(BeNumerically(">=", 50*2.6))
		})
	})

	Describe("a site answering 429 with Retry-After: 2", func() {
		It("sends nothing to that origin for 2 seconds", func() {
			r := tooMany.get()
			Expect(r.errs).To(BeEmpty())
			Expect(r.after[0].Sub(r.throttledAt)).To(BeNumerically(">=", 2*time.Second))
			Expect(r.reqs).To(matchers.WaitAfterRetryAfter())
		})
		It("keeps serving another origin meanwhile", func() {
			r := tooMany.get()
			n := 0
			for _, a := range r.other {
				if a.After(r.throttledAt) && a.Before(r.throttledAt.Add(2*time.Second)) {
					n++
				}
			}
			Expect(n).To(BeNumerically(">=", 4), "arrivals at the other origin during the pause")
		})
		// After the pause the schedule restarts from the first request: the next one comes a whole
		// interval of the halved rate (693 ms) after it, however late a busy machine let the first
		// one go. Later gaps may be shorter when one start was late — the schedule catches up, never
		// closer than half an interval — so the rate shows in the mean and in every second's count.
		It("then requests that origin at half the rate, starting a whole interval after the first request", func() {
			r := tooMany.get()
			Expect(r.after[1].Sub(r.after[0])).To(BeNumerically(">=", 600*time.Millisecond), "gaps after the pause: %v", hcGaps(r.after))
			Expect(hcMeanGap(r.after)).To(BeNumerically(">=", 600*time.Millisecond), "gaps after the pause: %v", hcGaps(r.after))
			Expect(r.afterReqs).To(matchers.StartAtMostPerSecond(2), "1.5 per second: gaps after the pause %v", hcGaps(r.after))
			Expect(hcMeanGap(r.before)).To(BeNumerically("<", hcMeanGap(r.after)))
		})
		It("retries the request, and the caller sees the success", func() {
			r := tooMany.get()
			Expect(r.statuses).To(HaveEach(http.StatusOK))
		})
		It("reports the pause with its reason", func() {
			r := tooMany.get()
			Expect(r.paused).To(ContainElement(hostclock.ReasonRetryAfter))
		})
	})

	Describe("a site answering 503 with Retry-After as an HTTP-date", func() {
		It("sends nothing to that origin before that second", func() {
			r := dated.get()
			Expect(r.err).NotTo(HaveOccurred())
			Expect(r.retriedAt).NotTo(BeTemporally("<", r.date))
			Expect(r.status).To(Equal(http.StatusOK))
		})
	})

	Describe("a site answering 503 without Retry-After", func() {
		It("waits at least the backoff base before every new attempt", func() {
			r := unavailable.get()
			Expect(r.err).NotTo(HaveOccurred())
			Expect(r.pages).To(HaveLen(3))
			Expect(hcMinGap(r.pages)).To(BeNumerically(">=", backoff.ThrottledBackoff().Base))
		})
		It("retries the request, and the caller sees the success", func() {
			r := unavailable.get()
			Expect(r.status).To(Equal(http.StatusOK))
			Expect(r.body).To(Equal("finally"))
		})
	})

	Describe("a site whose robots.txt asks for a Crawl-delay of 2", func() {
		It("leaves at least 2 seconds between the starts of requests to it", func() {
			at := crawlDelay.get()
			Expect(len(at)).To(BeNumerically(">=", 4), "robots.txt and three pages")
			Expect(hcMinGap(at)).To(BeNumerically(">=", 2*time.Second))
		})
	})

	Describe("a site that answers its first 5 pages at once, then takes 1.5 s for each", func() {
		It("leaves at least about 3 seconds between starts once it has answered slowly", func() {
			r := slowing.get()
			Expect(r.errs).To(BeEmpty())
			var gaps []time.Duration
			for i := 1; i < len(r.arrivals); i++ {
				if r.arrivals[i].After(r.firstSlowDone) {
					gaps = append(gaps, r.arrivals[i].Sub(r.arrivals[i-1]))
				}
			}
			fmt.Fprintf(GinkgoWriter, "gaps between arrivals: %v\n", hcGaps(r.arrivals))
			Expect(len(gaps)).To(BeNumerically(">=", 3), "arrivals after the first slow answer: %v", hcGaps(r.arrivals))
			Expect(slices.Min(gaps)).To(BeNumerically(">=", 2700*time.Millisecond), "gaps after the first slow answer: %v", gaps)
		})
		It("never lets a one-second window hold more than 3 arrivals", func() {
			r := slowing.get()
			Expect(r.reqs).To(matchers.StartAtMostPerSecond(3), "gaps %v", hcGaps(r.arrivals))
		})
		It("tells the operator that it slowed down, and why", func() {
			r := slowing.get()
			Expect(r.notices).To(ContainElement(ContainSubstring("1.5s")), "latency notices")
		})
	})
})

// hcSlowing is what a site that slows down saw, and what the door said about it.
type hcSlowing struct {
	reqs          []etiquettetest.Request // every request, robots.txt included
	arrivals      []time.Time             // their arrivals
	firstSlowDone time.Time               // when the first slow answer was complete
	notices       []string                // Detail of the door's latency notices
	errs          []error
}

// hcSlowAnswer is how long the slowing site takes for each page after its fifth.
const hcSlowAnswer = 1500 * time.Millisecond

func hcSlowingDown(d time.Duration) hcSlowing {
	var mu sync.Mutex
	var r hcSlowing
	site := etiquettetest.NewSite()
	defer site.Close()
	pages := 0
	s := site.NewOrigin().Robots(allowAll).Otherwise(etiquettetest.Func(func(*http.Request) etiquettetest.Answer {
		mu.Lock()
		defer mu.Unlock()
		pages++
		if pages <= 5 {
			return hcPage
		}
		return hcPage.Delay(hcSlowAnswer) // the site's own slowness, not synchronisation
	}))
	p := isolatedPolicy()
	p.Events = &events.Bus{}
	p.Events.Subscribe(func(e events.Event) {
		if e.Type == events.Notice && e.Reason == hostclock.ReasonLatency {
			mu.Lock()
			r.notices = append(r.notices, e.Detail)
			mu.Unlock()
		}
	})
	door, err := politeness.NewDoor(p)
	if err != nil {
		return hcSlowing{errs: []error{err}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	errs := &hcErrs{}
	var wg sync.WaitGroup
	for range 4 {
		hcHammer(ctx, &wg, door.Client(), s.URL, "page", errs)
	}
	wg.Wait()
	r.reqs = s.Requests()
	r.arrivals = hcArrivals(r.reqs)
	for _, q := range r.reqs {
		// Only a delayed answer takes that long: the first of them to be complete.
		if q.Status != 0 && q.Done.Sub(q.At) >= hcSlowAnswer && (r.firstSlowDone.IsZero() || q.Done.Before(r.firstSlowDone)) {
			r.firstSlowDone = q.Done
		}
	}
	mu.Lock()
	defer mu.Unlock()
	r.errs = errs.errs
	if r.firstSlowDone.IsZero() {
		r.errs = append(r.errs, fmt.Errorf("the site never answered slowly: arrivals %v", etiquettetest.Paths(r.reqs)))
	}
	return r
}

// hcFuture is the result of a scenario running in the background.
type hcFuture[T any] struct {
	done chan struct{}
	v    T
}

func hcStart[T any](f func() T) *hcFuture[T] {
	ft := &hcFuture[T]{done: make(chan struct{})}
	go func() {
		defer GinkgoRecover()
		defer close(ft.done)
		ft.v = f()
	}()
	return ft
}

func (f *hcFuture[T]) get() T {
	Eventually(f.done).WithTimeout(60 * time.Second).Should(BeClosed())
	return f.v
}

// hcLoad is what one origin received during a load scenario.
type hcLoad struct {
	reqs     []etiquettetest.Request
	arrivals []time.Time
	byClient map[string]int // first path segment → arrivals
	errs     []error
}

// hcPage is the page every path of the load scenarios' origins answers with.
var hcPage = etiquettetest.HTMLPage("ok")

// hcAllowAll adds to site an origin whose robots.txt allows everything and whose every other
// path is a page.
func hcAllowAll(site *etiquettetest.Site) *etiquettetest.Origin {
	return site.NewOrigin().Robots(allowAll).Otherwise(hcPage)
}

func hcLoadOf(s *etiquettetest.Origin, errs []error) hcLoad {
	l := hcLoad{reqs: s.Requests(), byClient: map[string]int{}, errs: errs}
	l.arrivals = hcArrivals(l.reqs)
	for _, r := range l.reqs {
		l.byClient[strings.SplitN(strings.TrimPrefix(r.Target, "/"), "/", 2)[0]]++
	}
	return l
}

// hcArrivals lists when each request arrived.
func hcArrivals(reqs []etiquettetest.Request) []time.Time {
	var at []time.Time
	for _, r := range reqs {
		at = append(at, r.At)
	}
	return at
}

// hcErrs collects the unexpected errors of concurrent clients; the end of the run cancelling a
// request that waits for its turn is expected.
type hcErrs struct {
	mu   sync.Mutex
	errs []error
}

func (e *hcErrs) add(ctx context.Context, err error) {
	if err == nil || ctx.Err() != nil || hcRunOver(err) {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.errs = append(e.errs, err)
}

func hcGet(ctx context.Context, c *http.Client, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// hcRunOver reports the clock's refusal of a request whose deadline — the end of the run — comes
// before the origin's next start: expected near the end of a timed run.
func hcRunOver(err error) bool {
	var tl *hostclock.WaitTooLongError
	return errors.As(err, &tl)
}

// hcHammer sends requests to base+"/"+name+"/<n>" from one goroutine until ctx ends, or until
// the clock says the next start comes after it.
func hcHammer(ctx context.Context, wg *sync.WaitGroup, c *http.Client, base, name string, errs *hcErrs) {
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			_, _, err := hcGet(ctx, c, fmt.Sprintf("%s/%s/%d", base, name, i))
			errs.add(ctx, err)
			if hcRunOver(err) {
				return
			}
		}
	})
}

func hcOneOriginManyClients(d time.Duration) hcLoad {
	site := etiquettetest.NewSite()
	defer site.Close()
	s := hcAllowAll(site)
	p := isolatedPolicy()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	errs := &hcErrs{}
	var wg sync.WaitGroup

	door, err := politeness.NewDoor(p)
	if err != nil {
		return hcLoad{errs: []error{err}}
	}
	client := door.Client()
	for range 16 {
		hcHammer(ctx, &wg, client, s.URL, "goroutine", errs)
	}
	// Two collectors with the same policy, and a clone: the context is set before Polite, which
	// derives every request's context from it, so the collectors stop when the run ends.
	c1, c2 := colly.NewCollector(), colly.NewCollector()
	for _, c := range []*colly.Collector{c1, c2} {
		c.Context = ctx
		if err := extensions.Polite(c, p); err != nil {
			return hcLoad{errs: []error{err}}
		}
	}
	for name, c := range map[string]*colly.Collector{"collector1": c1, "collector2": c2, "clone": c1.Clone()} {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				errs.add(ctx, c.Visit(fmt.Sprintf("%s/%s/%d", s.URL, name, i)))
			}
		})
	}
	wg.Wait()
	return hcLoadOf(s, errs.errs)
}

func hcManyOrigins(n int, d time.Duration) []hcLoad {
	p := isolatedPolicy()
	door, err := politeness.NewDoor(p)
	if err != nil {
		return []hcLoad{{errs: []error{err}}}
	}
	client := door.Client()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	site := etiquettetest.NewSite()
	defer site.Close()
	sites := make([]*etiquettetest.Origin, n)
	errs := make([]*hcErrs, n)
	var wg sync.WaitGroup
	for i := range sites {
		sites[i], errs[i] = hcAllowAll(site), &hcErrs{}
		hcHammer(ctx, &wg, client, sites[i].URL, "a", errs[i])
		hcHammer(ctx, &wg, client, sites[i].URL, "b", errs[i])
	}
	wg.Wait()
	out := make([]hcLoad, n)
	for i, s := range sites {
		out[i] = hcLoadOf(s, errs[i].errs)
	}
	return out
}

type hcThrottled struct {
	reqs          []etiquettetest.Request // what the throttled origin received
	afterReqs     []etiquettetest.Request // the requests that arrived after the 429's
	throttledAt   time.Time               // when the request answered 429 arrived
	before, after []time.Time             // page arrivals at the throttled origin before and after it
	other         []time.Time             // arrivals at the other origin
	statuses      []int                   // what the caller saw
	paused        []string                // reasons of the door's Paused events
	errs          []error
}

func hcTooManyRequests() hcThrottled {
	site := etiquettetest.NewSite()
	defer site.Close()
	throttled := hcAllowAll(site).Nth("/p/4", 1, etiquettetest.Status(http.StatusTooManyRequests).RetryAfter(2*time.Second))
	other := hcAllowAll(site)

	p := isolatedPolicy()
	p.Events = &events.Bus{}
	var mu sync.Mutex
	var r hcThrottled
	p.Events.Subscribe(func(e events.Event) {
		if e.Type == events.Paused {
			mu.Lock()
			r.paused = append(r.paused, e.Reason)
			mu.Unlock()
		}
	})
	door, err := politeness.NewDoor(p)
	if err != nil {
		return hcThrottled{errs: []error{err}}
	}
	client := door.Client()
	ctx, cancel := context.WithCancel(context.Background())
	errs := &hcErrs{}
	var wg sync.WaitGroup
	hcHammer(ctx, &wg, client, other.URL, "other", errs)
	for i := 1; i <= 9; i++ {
		status, _, err := hcGet(context.Background(), client, fmt.Sprintf("%s/p/%d", throttled.URL, i))
		errs.add(context.Background(), err)
		r.statuses = append(r.statuses, status)
	}
	cancel()
	wg.Wait()
	r.reqs = throttled.Requests()
	for i, q := range r.reqs {
		if q.Path() == "/p/4" && r.throttledAt.IsZero() {
			r.throttledAt = q.At
			for _, b := range r.reqs[:i+1] {
				if b.Path() != "/robots.txt" {
					r.before = append(r.before, b.At)
				}
			}
			r.afterReqs = r.reqs[i+1:]
			r.after = hcArrivals(r.afterReqs)
		}
	}
	r.other = hcArrivals(other.Requests())
	r.errs = errs.errs
	if r.throttledAt.IsZero() || len(r.after) < 2 {
		r.errs = append(r.errs, fmt.Errorf("the scenario did not run: arrivals %v", etiquettetest.Paths(r.reqs)))
	}
	return r
}

type hcDated struct {
	date      time.Time // the Retry-After date the site sent
	retriedAt time.Time // when the retry arrived
	status    int
	err       error
}

func hcRetryAfterDate() hcDated {
	var mu sync.Mutex
	var r hcDated
	site := etiquettetest.NewSite()
	defer site.Close()
	s := hcAllowAll(site).Serve("/page", etiquettetest.Func(func(*http.Request) etiquettetest.Answer {
		mu.Lock()
		defer mu.Unlock()
		if r.date.IsZero() {
			// HTTP-dates have one-second resolution: the date names a whole second 2–3 s ahead.
			r.date = time.Now().Add(3 * time.Second).Truncate(time.Second)
			return etiquettetest.Status(http.StatusServiceUnavailable).Header("Retry-After", r.date.UTC().Format(http.TimeFormat))
		}
		return hcPage
	}))
	door, err := politeness.NewDoor(isolatedPolicy())
	if err != nil {
		return hcDated{err: err}
	}
	status, _, err := hcGet(context.Background(), door.Client(), s.URL+"/page")
	mu.Lock()
	defer mu.Unlock()
	r.status, r.err = status, err
	if pages := hcPathArrivals(s.Requests(), "/page"); len(pages) >= 2 {
		r.retriedAt = pages[1]
	} else if r.err == nil {
		r.err = fmt.Errorf("the page was not retried: arrivals %v", etiquettetest.Paths(s.Requests()))
	}
	return r
}

type hcUnavailable struct {
	pages  []time.Time
	status int
	body   string
	err    error
}

// hcPathArrivals lists when the requests for path arrived.
func hcPathArrivals(reqs []etiquettetest.Request, path string) []time.Time {
	var at []time.Time
	for _, r := range reqs {
		if r.Path() == path {
			at = append(at, r.At)
		}
	}
	return at
}

func hcUnavailableWithoutRetryAfter() hcUnavailable {
	site := etiquettetest.NewSite()
	defer site.Close()
	unavailable := etiquettetest.Status(http.StatusServiceUnavailable)
	s := site.NewOrigin().Robots(allowAll).Serve("/page", etiquettetest.Text("finally")).
		Nth("/page", 1, unavailable).Nth("/page", 2, unavailable)
	door, err := politeness.NewDoor(isolatedPolicy())
	if err != nil {
		return hcUnavailable{err: err}
	}
	var r hcUnavailable
	r.status, r.body, r.err = hcGet(context.Background(), door.Client(), s.URL+"/page")
	r.pages = hcPathArrivals(s.Requests(), "/page")
	return r
}

func hcCrawlDelay() []time.Time {
	site := etiquettetest.NewSite()
	defer site.Close()
	s := site.NewOrigin().Robots("User-agent: *\nCrawl-delay: 2\nAllow: /\n").Otherwise(etiquettetest.Text("ok"))
	door, err := politeness.NewDoor(isolatedPolicy())
	if err != nil {
		return nil
	}
	client := door.Client()
	var wg sync.WaitGroup
	for _, path := range []string{"/a", "/b", "/c"} {
		wg.Go(func() { _, _, _ = hcGet(context.Background(), client, s.URL+path) })
	}
	wg.Wait()
	return hcArrivals(s.Requests())
}

// hcRate returns the average arrival rate between the first and the last arrival.
func hcRate(at []time.Time) float64 {
	if len(at) < 2 {
		return 0
	}
	at = slices.SortedFunc(slices.Values(at), time.Time.Compare)
	return float64(len(at)-1) / at[len(at)-1].Sub(at[0]).Seconds()
}

func hcMinGap(at []time.Time) time.Duration {
	at = slices.SortedFunc(slices.Values(at), time.Time.Compare)
	gap := time.Duration(1<<63 - 1)
	for i := 1; i < len(at); i++ {
		gap = min(gap, at[i].Sub(at[i-1]))
	}
	return gap
}

func hcMeanGap(at []time.Time) time.Duration {
	if len(at) < 2 {
		return 0
	}
	at = slices.SortedFunc(slices.Values(at), time.Time.Compare)
	return at[len(at)-1].Sub(at[0]) / time.Duration(len(at)-1)
}

// hcGaps lists the gaps between consecutive arrivals, for the failure report.
func hcGaps(at []time.Time) []string {
	at = slices.SortedFunc(slices.Values(at), time.Time.Compare)
	var out []string
	for i := 1; i < len(at); i++ {
		out = append(out, at[i].Sub(at[i-1]).Round(time.Millisecond).String())
	}
	return out
}
