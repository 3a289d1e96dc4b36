package extensions

// This file decides what Polite says at start about the collector settings the door overrides:
// each once, all in one Warn record, naming the Policy field that sets it instead.

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/politecrawl/etiquette/politeness"
)

// overrides returns the effect of each setting in s that the door built for p overrides. agent is
// the door's User-Agent.
func (s collectorSettings) overrides(p politeness.Policy, agent string) []string {
	var said []string
	if s.userAgent != "" && s.userAgent != collyDefaultAgent && s.userAgent != agent {
		said = append(said, fmt.Sprintf("UserAgent %q: every request carries the identity %q instead (Policy.Identity)", s.userAgent, agent))
	}
	if !s.ignoreRobots {
		token := p.Identity.CrawlToken()
		if p.Mode == politeness.UserTriggered {
			token = p.Identity.UserTriggeredToken()
		}
		said = append(said, fmt.Sprintf("IgnoreRobotsTxt=false: Colly's own robots.txt check is off; the door obeys robots.txt (RFC 9309) for the token %q "+
			"on every request, redirect hops included, and its refusals are colly.ErrRobotsTxtBlocked too (Policy.Identity)", token))
	}
	if t, ok := s.transport.(*http.Transport); ok && t.Proxy != nil {
		said = append(said, "SetProxy/SetProxyFunc: carried into the door (Policy.Proxy); the door's own requests — robots.txt, "+
			"re-sends after a 429 or 503 — go through it too, so a rotating proxy switcher turns for them as well")
	}
	rate, concurrency := p.Rate, p.Concurrency
	if rate <= 0 {
		rate = politeness.DefaultRate
	}
	if concurrency <= 0 {
		concurrency = politeness.DefaultConcurrency
	}
	interval := time.Duration(float64(time.Second) / rate).Round(time.Millisecond)
	if s.async {
		said = append(said, fmt.Sprintf("Async: requests still run concurrently, but at most %d per origin at once and starting %s apart at the least; "+
			"the others wait inside the door (Policy.Concurrency, Policy.Rate)", concurrency, interval))
	}
	for _, r := range s.rules {
		if r == nil {
			continue
		}
		domain := r.DomainGlob
		if domain == "" {
			domain = r.DomainRegexp
		}
		if r.Parallelism > concurrency {
			said = append(said, fmt.Sprintf("LimitRule %q Parallelism %d: at most %d requests per origin run at once (Policy.Concurrency)", domain, r.Parallelism, concurrency))
		}
		if r.Delay > 0 && r.Delay < interval {
			said = append(said, fmt.Sprintf("LimitRule %q Delay %s: requests to an origin start %s apart at the least (Policy.Rate)", domain, r.Delay, interval))
		}
	}
	return said
}

// stateOverrides logs what Polite overrides, once, in one Warn record: a library logs warnings
// only, and this one changes what the scraper asked for, so it must be seen with no logger
// configured.
func stateOverrides(logger *slog.Logger, said []string) {
	if len(said) == 0 {
		return
	}
	logger.Warn("etiquette: Polite changes what these settings of the collector do; set the named Policy fields to choose otherwise", "overrides", strings.Join(said, "; "))
}
