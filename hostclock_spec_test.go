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
			Expect(hcWindowMax(l.arrivals)).To(BeNumerically("<=", 3), "busiest second of %d arrivals", len(l.arrivals))
		})
		It("uses the budget: at least 2.6 arrivals per second on average", func() {
			l := oneOrigin.get()
			Expect(hcRate(l.arrivals)).To(BeNumerically(">=", 2.6))
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
				Expect(hcWindowMax(l.arrivals)).To(BeNumerically("<=", 3), "busiest second at an origin with gaps %v", hcGaps(l.arrivals))
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
			Expect(hcWindowMax(r.after)).To(BeNumerically("<=", 2), "1.5 per second: gaps after the pause %v", hcGaps(r.after))
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
			Expect(hcWindowMax(r.arrivals)).To(BeNumerically("<=", 3), "gaps %v", hcGaps(r.arrivals))
		})
		It("tells the operator that it slowed down, and why", func() {
			r := slowing.get()
			Expect(r.notices).To(ContainElement(ContainSubstring("1.5s")), "latency notices")
		})
	})
})

// hcSlowing is what a site that slows down saw, and what the door said about it.
type hcSlowing struct {
	arrivals      []time.Time // every request, robots.txt included
	firstSlowDone time.Time   // when the first slow answer was complete
	notices       []string    // Detail of the door's latency notices
	errs          []error
}

func hcSlowingDown(d time.Duration) hcSlowing {
	var mu sync.Mutex
	var r hcSlowing
	s := hcCountingPages(func(w http.ResponseWriter, req *http.Request, n int) {
		if n <= 5 {
			hcAllowAll(w, req)
			return
		}
		time.Sleep(1500 * time.Millisecond) // the site's own slowness, not synchronisation
		hcAllowAll(w, req)
		w.(http.Flusher).Flush()
		mu.Lock()
		if r.firstSlowDone.IsZero() {
			r.firstSlowDone = time.Now()
		}
		mu.Unlock()
	})
	defer s.Close()
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
	for _, h := range s.Hits() {
		r.arrivals = append(r.arrivals, h.At)
	}
	mu.Lock()
	defer mu.Unlock()
	r.errs = errs.errs
	if r.firstSlowDone.IsZero() {
		r.errs = append(r.errs, fmt.Errorf("the site never answered slowly: arrivals %v", s.Paths()))
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
	arrivals []time.Time
	byClient map[string]int // first path segment → arrivals
	errs     []error
}

func hcAllowAll(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		return
	}
	fmt.Fprint(w, "<html><body>ok</body></html>")
}

func hcLoadOf(s *site, errs []error) hcLoad {
	l := hcLoad{byClient: map[string]int{}, errs: errs}
	for _, h := range s.Hits() {
		l.arrivals = append(l.arrivals, h.At)
		l.byClient[strings.SplitN(strings.TrimPrefix(h.Path, "/"), "/", 2)[0]]++
	}
	return l
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
	s := newSite(hcAllowAll)
	defer s.Close()
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
	sites := make([]*site, n)
	errs := make([]*hcErrs, n)
	var wg sync.WaitGroup
	for i := range sites {
		sites[i], errs[i] = newSite(hcAllowAll), &hcErrs{}
		defer sites[i].Close()
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
	throttledAt   time.Time   // when the 429 arrived
	before, after []time.Time // page arrivals at the throttled origin before and after it
	other         []time.Time // arrivals at the other origin
	statuses      []int       // what the caller saw
	paused        []string    // reasons of the door's Paused events
	errs          []error
}

func hcTooManyRequests() hcThrottled {
	var once sync.Once
	throttled := newSite(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/p/4" {
			answered := false
			once.Do(func() {
				w.Header().Set("Retry-After", "2")
				w.WriteHeader(http.StatusTooManyRequests)
				answered = true
			})
			if answered {
				return
			}
		}
		hcAllowAll(w, r)
	})
	defer throttled.Close()
	other := newSite(hcAllowAll)
	defer other.Close()

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
	hits := throttled.Hits()
	for i, h := range hits {
		if h.Path == "/p/4" && r.throttledAt.IsZero() {
			r.throttledAt = h.At
			for _, b := range hits[:i+1] {
				if b.Path != "/robots.txt" {
					r.before = append(r.before, b.At)
				}
			}
			for _, a := range hits[i+1:] {
				r.after = append(r.after, a.At)
			}
		}
	}
	for _, h := range other.Hits() {
		r.other = append(r.other, h.At)
	}
	r.errs = errs.errs
	if r.throttledAt.IsZero() || len(r.after) < 2 {
		r.errs = append(r.errs, fmt.Errorf("the scenario did not run: arrivals %v", throttled.Paths()))
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
	s := newSite(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/page" {
			hcAllowAll(w, req)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if r.date.IsZero() {
			// HTTP-dates have one-second resolution: the date names a whole second 2–3 s ahead.
			r.date = time.Now().Add(3 * time.Second).Truncate(time.Second)
			w.Header().Set("Retry-After", r.date.UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		r.retriedAt = time.Now()
		hcAllowAll(w, req)
	})
	defer s.Close()
	door, err := politeness.NewDoor(isolatedPolicy())
	if err != nil {
		return hcDated{err: err}
	}
	status, _, err := hcGet(context.Background(), door.Client(), s.URL+"/page")
	mu.Lock()
	defer mu.Unlock()
	r.status, r.err = status, err
	return r
}

type hcUnavailable struct {
	pages  []time.Time
	status int
	body   string
	err    error
}

// hcCountingPages starts a site that allows everything in its robots.txt and hands every other
// request to handle with its number, counting from 1.
func hcCountingPages(handle func(w http.ResponseWriter, r *http.Request, n int)) *site {
	var mu sync.Mutex
	pages := 0
	return newSite(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			hcAllowAll(w, r)
			return
		}
		mu.Lock()
		pages++
		n := pages
		mu.Unlock()
		handle(w, r, n)
	})
}

func hcUnavailableWithoutRetryAfter() hcUnavailable {
	s := hcCountingPages(func(w http.ResponseWriter, r *http.Request, n int) {
		if n <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "finally")
	})
	defer s.Close()
	door, err := politeness.NewDoor(isolatedPolicy())
	if err != nil {
		return hcUnavailable{err: err}
	}
	var r hcUnavailable
	r.status, r.body, r.err = hcGet(context.Background(), door.Client(), s.URL+"/page")
	for _, h := range s.Hits() {
		if h.Path == "/page" {
			r.pages = append(r.pages, h.At)
		}
	}
	return r
}

func hcCrawlDelay() []time.Time {
	s := newSite(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nCrawl-delay: 2\nAllow: /\n")
			return
		}
		fmt.Fprint(w, "ok")
	})
	defer s.Close()
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
	var at []time.Time
	for _, h := range s.Hits() {
		at = append(at, h.At)
	}
	return at
}

// hcWindowMax returns the largest number of arrivals in any one-second window [t, t+1s).
func hcWindowMax(at []time.Time) int {
	at = slices.SortedFunc(slices.Values(at), time.Time.Compare)
	most := 0
	for i := range at {
		n := 0
		for j := i; j < len(at) && at[j].Sub(at[i]) < time.Second; j++ {
			n++
		}
		most = max(most, n)
	}
	return most
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
