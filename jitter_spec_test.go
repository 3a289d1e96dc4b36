package etiquette_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/etiquettetest/matchers"
	"github.com/politecrawl/etiquette/politeness"
)

// jitterProxy stands between the crawler and one origin and holds a seeded, random half of the
// requests for 0–maxDelay before passing them on, as a network path does. It keeps the site's
// log as the site would write it: the moment each request reached the proxy plus the delay the
// path added — the crawler's send times plus loopback plus the injected jitter, without the
// proxy's own forwarding, whose time on a loaded machine is no part of the path being modelled.
type jitterProxy struct {
	*httptest.Server
	mu       sync.Mutex
	draw     *rand.Rand
	arrivals []etiquettetest.Request
}

func newJitterProxy(origin *etiquettetest.Origin, seed uint64, maxDelay time.Duration) *jitterProxy {
	target, err := url.Parse(origin.URL)
	Expect(err).NotTo(HaveOccurred())
	forward := httputil.NewSingleHostReverseProxy(target)
	p := &jitterProxy{draw: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached := time.Now()
		p.mu.Lock()
		var delay time.Duration
		if p.draw.IntN(2) == 0 {
			delay = time.Duration(p.draw.Int64N(int64(maxDelay) + 1))
		}
		p.arrivals = append(p.arrivals, etiquettetest.Request{At: reached.Add(delay), Method: r.Method,
			Origin: p.URL, Target: r.URL.RequestURI()})
		p.mu.Unlock()
		t := time.NewTimer(time.Until(reached.Add(delay))) // the path's latency, not a synchronisation
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
		forward.ServeHTTP(w, r)
	}))
	DeferCleanup(p.Close)
	return p
}

// log returns the site's log of the requests that came through, in order of arrival.
func (p *jitterProxy) log() []etiquettetest.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := slices.Clone(p.arrivals)
	slices.SortFunc(out, func(a, b etiquettetest.Request) int { return a.At.Compare(b.At) })
	return out
}

var _ = Describe("a crawl whose requests reach the site through a path that delays some by up to 100 ms", func() {
	It("still arrives at most 3 times in any second at each origin, and uses most of the budget", func() {
		site := newTestSite()
		const origins = 5
		door, err := politeness.NewDoor(isolatedPolicy())
		Expect(err).NotTo(HaveOccurred())
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		errs := &hcErrs{}
		var wg sync.WaitGroup
		var proxies []*jitterProxy
		for i := range origins {
			proxy := newJitterProxy(hcAllowAll(site), uint64(i+1), 100*time.Millisecond)
			proxies = append(proxies, proxy)
			for _, name := range []string{"a", "b"} {
				hcHammer(ctx, &wg, door.Client(), proxy.URL, name, errs)
			}
		}
		wg.Wait()
		Expect(errs.errs).To(BeEmpty())
		total := 0
		for _, o := range proxies {
			reqs := o.log()
			total += len(reqs)
			Expect(reqs).To(matchers.StartAtMostPerSecond(3), "arrivals at %s, as its log shows them", o.URL)
			rate := hcRate(hcArrivals(reqs))
			GinkgoWriter.Printf("%s: %d arrivals, %.2f/s, shortest gap %v\n", o.URL, len(reqs), rate, hcMinGap(hcArrivals(reqs)))
			// The margins leave 2.63 starts per second (hostclock's TestTheDefaultsLeaveAMeanRateOfAtLeast2_6);
			// a loaded machine loses a little of it to late grants.
			Expect(rate).To(BeNumerically(">=", 2.55), "the mean arrival rate at %s", o.URL)
		}
		Expect(total).To(BeNumerically(">=", 300), "requests judged over all origins")
	})
})
