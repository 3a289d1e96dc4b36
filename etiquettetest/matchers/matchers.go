// Package matchers offers the politeness rules of package etiquettetest as Gomega matchers, so
// a crawler's own specs can say what a site operator expects of it:
//
//	Expect(site).To(matchers.IdentifyEveryRequestAs(ua, "bot@example.org"))
//	Expect(site).To(matchers.FetchRobotsTxtFirst())
//	Expect(site.Since(mark)).To(matchers.RevalidateWith304())
//
// Every matcher accepts a recording: an *etiquettetest.Site (all its requests), an
// *etiquettetest.Origin (that origin's), anything else with a Requests() []etiquettetest.Request
// method, or a []etiquettetest.Request such as site.Since(mark). A failure lists the offending
// requests as an operator would quote them from a log — time, origin, method, path, and the
// header or timing at fault. A matcher on an empty recording is an error, not a pass: a crawl
// that never reached the site proves nothing. Each rule is defined, once, in etiquettetest (see
// its constructor of the same name); tests without Gomega use etiquettetest.Verify.
package matchers

import (
	"errors"
	"fmt"

	"github.com/onsi/gomega/types"

	"github.com/politecrawl/etiquette/etiquettetest"
)

// IdentifyEveryRequestAs succeeds when every request carries User-Agent ua and, when from is not
// empty, From from — robots.txt, redirect hops and retries included.
// See [etiquettetest.IdentifyEveryRequestAs].
func IdentifyEveryRequestAs(ua, from string) types.GomegaMatcher {
	return Obey(etiquettetest.IdentifyEveryRequestAs(ua, from))
}

// FetchRobotsTxtFirst succeeds when, at every origin, robots.txt was answered before any other
// request arrived. See [etiquettetest.FetchRobotsTxtFirst].
func FetchRobotsTxtFirst() types.GomegaMatcher { return Obey(etiquettetest.FetchRobotsTxtFirst()) }

// NeverRequest succeeds when no request's path and query starts with one of paths (a trailing
// "$" asks for an exact match). See [etiquettetest.NeverRequest].
func NeverRequest(paths ...string) types.GomegaMatcher {
	return Obey(etiquettetest.NeverRequest(paths...))
}

// StartAtMostPerSecond succeeds when no one-second window of any host:port holds more than n
// arrivals. See [etiquettetest.StartAtMostPerSecond].
func StartAtMostPerSecond(n int) types.GomegaMatcher {
	return Obey(etiquettetest.StartAtMostPerSecond(n))
}

// KeepAtMostInFlight succeeds when no host:port was ever answering more than n requests at
// once. See [etiquettetest.KeepAtMostInFlight].
func KeepAtMostInFlight(n int) types.GomegaMatcher {
	return Obey(etiquettetest.KeepAtMostInFlight(n))
}

// WaitAfterRetryAfter succeeds when no request reached an origin while a Retry-After it had
// sent was running, within etiquettetest.RetryAfterTolerance. See
// [etiquettetest.WaitAfterRetryAfter].
func WaitAfterRetryAfter() types.GomegaMatcher { return Obey(etiquettetest.WaitAfterRetryAfter()) }

// SendNoCookies succeeds when no request carries a Cookie header.
func SendNoCookies() types.GomegaMatcher { return Obey(etiquettetest.SendNoCookies()) }

// SendOnlyCookies succeeds when the requests' Cookie headers name no cookie but names.
// See [etiquettetest.SendOnlyCookies].
func SendOnlyCookies(names ...string) types.GomegaMatcher {
	return Obey(etiquettetest.SendOnlyCookies(names...))
}

// RevalidateWith304 succeeds when every GET or HEAD for a URL the site serves with a validator
// was conditional and answered 304; use it on the requests of a second crawl, site.Since(mark).
// See [etiquettetest.RevalidateWith304] for the precise definition.
func RevalidateWith304() types.GomegaMatcher { return Obey(etiquettetest.RevalidateWith304()) }

// ProbeNoWellKnown succeeds when every request under /.well-known/ is for a URL an earlier
// answer of the site mentioned. Use it on the whole site, whose recording holds those answers.
// See [etiquettetest.ProbeNoWellKnown].
func ProbeNoWellKnown() types.GomegaMatcher { return Obey(etiquettetest.ProbeNoWellKnown()) }

// Obey turns any etiquettetest rule into a matcher; the matchers above are Obey of the rule of
// the same name.
func Obey(rule etiquettetest.Rule) types.GomegaMatcher { return &ruleMatcher{rule: rule} }

type ruleMatcher struct {
	rule      etiquettetest.Rule
	violation *etiquettetest.ViolationError // set by a failed Match
	judged    int                           // requests judged by the last Match
}

func (m *ruleMatcher) Match(actual any) (bool, error) {
	reqs, err := requestsOf(actual)
	if err != nil {
		return false, err
	}
	m.judged, m.violation = len(reqs), nil
	err = m.rule.Check(reqs)
	if errors.As(err, &m.violation) {
		return false, nil
	}
	return err == nil, err
}

func (m *ruleMatcher) FailureMessage(any) string {
	if m.violation == nil {
		return "expected " + m.rule.String()
	}
	return m.violation.Error()
}

func (m *ruleMatcher) NegatedFailureMessage(any) string {
	return fmt.Sprintf("expected a request to break the rule %q, but all %d requests kept it", m.rule.String(), m.judged)
}

// requestsOf reads the recording a matcher was given.
func requestsOf(actual any) ([]etiquettetest.Request, error) {
	switch a := actual.(type) {
	case []etiquettetest.Request:
		return a, nil
	case interface {
		Requests() []etiquettetest.Request
	}:
		if s, ok := a.(interface{ Unrecorded() int }); ok && s.Unrecorded() > 0 {
			return nil, fmt.Errorf("the site answered %d requests beyond the %d it records; judge a shorter crawl", s.Unrecorded(), etiquettetest.MaxRecorded)
		}
		return a.Requests(), nil
	}
	return nil, fmt.Errorf("etiquettetest matchers judge a recording: an *etiquettetest.Site, an *etiquettetest.Origin or a []etiquettetest.Request; got %T", actual)
}
