package etiquette_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/etiquettetest/matchers"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/robots"
)

var _ = Describe("several doors in one process built with the default policy", func() {
	It("share one budget per origin, and a door asking for a lower rate gets it on top", func() {
		s := hcAllowAll(newTestSite())
		// No Policy.Clock: these doors use the process-wide budget, as an application with two
		// independent scrapers would.
		base := politeness.Policy{Identity: exampleBot(), NoCache: true, Logger: slog.New(slog.DiscardHandler)}
		slow := base
		slow.Rate = 1
		// A door authorised to go faster on another host must not bring a budget of its own here.
		authorised := base
		authorised.AuthorizedRates = map[string]float64{"fast.example": 10}
		// Sixteen clients in one line at 2.63 starts a second: each gets its first turn within
		// about 6 s, so the run lasts long enough for every door to be served on a loaded machine.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		errs := &hcErrs{}
		var wg sync.WaitGroup
		for name, p := range map[string]politeness.Policy{"first": base, "second": base, "slow": slow, "authorised": authorised} {
			door, err := politeness.NewDoor(p)
			Expect(err).NotTo(HaveOccurred())
			for range 4 {
				hcHammer(ctx, &wg, door.Client(), s.URL, name, errs)
			}
		}
		wg.Wait()
		l := hcLoadOf(s, errs.errs)
		Expect(l.errs).To(BeEmpty())
		Expect(l.reqs).To(matchers.StartAtMostPerSecond(3), "the origin's busiest second, all doors together")
		Expect(hcRate(l.arrivals)).To(BeNumerically(">=", 2.4), "the budget is used, not split three ways")
		for _, name := range []string{"first", "second", "slow", "authorised"} {
			Expect(l.byClient).To(HaveKeyWithValue(name, BeNumerically(">", 0)), "requests from the %s door", name)
		}
		var slowDoor []etiquettetest.Request
		for _, r := range l.reqs {
			if strings.HasPrefix(r.Target, "/slow/") {
				slowDoor = append(slowDoor, r)
			}
		}
		Expect(slowDoor).To(matchers.StartAtMostPerSecond(1), "the slow door's own rate of 1 per second")
	})
})

var _ = Describe("an origin that is paused when its robots.txt is first needed", func() {
	It("waits out the pause for robots.txt instead of treating it as unreachable", func() {
		s := hcAllowAll(newTestSite())
		p := isolatedPolicy()
		// The keeper gives its fetch 1 s; the origin is paused for 2 s. Only the time the request
		// takes once its turn has come may count against robots.txt.
		p.Robots = robots.NewKeeper(robots.Options{FetchTimeout: time.Second})
		p.Clock.(*hostclock.Local).Pause(s.Addr(), time.Now().Add(2*time.Second), "test")
		door, err := politeness.NewDoor(p)
		Expect(err).NotTo(HaveOccurred())
		started := time.Now()
		resp, err := door.Client().Get(s.URL + "/page")
		Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(200))
		Expect(etiquettetest.Paths(s.Requests())).To(HaveExactElements("/robots.txt", "/page"))
		Expect(s.Requests()[0].At.Sub(started)).To(BeNumerically(">=", 1900*time.Millisecond), "nothing before the pause ended")
	})
})

var _ = Describe("re-reading a page that is still fresh in the cache", func() {
	It("costs the site nothing and does not wait for the origin's turn", func() {
		s := newTestSite().NewOrigin().Otherwise(etiquettetest.HTMLPage("fresh for an hour").Header("Cache-Control", "max-age=3600"))
		p := isolatedPolicy() // 3 starts per second: ten budgeted requests would take over 3 s
		p.NoCache = false
		p.CacheStore = cache.NewMemoryStore(0)
		door, err := politeness.NewDoor(p)
		Expect(err).NotTo(HaveOccurred())
		read := func() {
			resp, err := door.Client().Get(s.URL + "/page")
			Expect(err).NotTo(HaveOccurred())
			_, err = io.ReadAll(resp.Body)
			Expect(err).NotTo(HaveOccurred())
			resp.Body.Close()
		}
		read()
		started := time.Now()
		for range 10 {
			read()
		}
		Expect(time.Since(started)).To(BeNumerically("<", 1500*time.Millisecond), "no read waited for a start slot")
		Expect(etiquettetest.Paths(s.Requests())).To(HaveExactElements("/robots.txt", "/page"))
		Expect(door.Stats().Cache).To(HaveKeyWithValue("fresh", 10))
	})
})
