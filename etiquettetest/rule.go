// This file decides how a politeness rule is judged and how a broken rule is reported.

package etiquettetest

import (
	"errors"
	"fmt"
	"strings"
)

// Rule is one expectation a site operator has of a crawler — "every request identifies the
// crawler", "robots.txt comes first" — judged over a recording. Build one with the constructors
// (IdentifyEveryRequestAs, FetchRobotsTxtFirst, …), then call [Rule.Check] or [Verify], or use
// the Gomega matchers of package matchers, which wrap the same rules. The zero Rule is not
// usable: its Check returns an error saying so.
type Rule struct {
	expect string                    // the rule as the end of a sentence that begins "expected "
	judge  func([]Request) []Offence // returns the requests that break the rule
	err    error                     // set when the constructor's arguments are unusable
}

// Errors of [Rule.Check] other than a [*ViolationError]; test with errors.Is.
var (
	// ErrNoRequests: the recording is empty, so there is nothing to judge. A rule never passes on
	// an empty recording, because a crawl that never reached the site proves nothing.
	ErrNoRequests = errors.New("the recording holds no requests: did the crawl reach the site?")
	// ErrInvalidRule: the rule was built with unusable arguments (the error says which).
	ErrInvalidRule = errors.New("invalid rule")
)

// String is the rule as one sentence.
func (r Rule) String() string { return r.expect }

// Check judges reqs, a recording in order of arrival ([Site.Requests], [Site.Since],
// [Origin.Requests]). It returns nil when every request keeps the rule, a [*ViolationError]
// listing the requests that break it, or an error wrapping [ErrNoRequests] or [ErrInvalidRule].
func (r Rule) Check(reqs []Request) error {
	switch {
	case r.err != nil:
		return r.err
	case r.judge == nil:
		return fmt.Errorf("etiquettetest: a zero Rule; build one with IdentifyEveryRequestAs, FetchRobotsTxtFirst, …: %w", ErrInvalidRule)
	case len(reqs) == 0:
		return fmt.Errorf("etiquettetest: %s: %w", r.expect, ErrNoRequests)
	}
	if offences := r.judge(reqs); len(offences) > 0 {
		return &ViolationError{Expected: r.expect, Judged: len(reqs), Offences: offences}
	}
	return nil
}

// invalid returns a rule whose Check reports that its arguments are unusable.
func invalid(format string, args ...any) Rule {
	return Rule{err: fmt.Errorf("etiquettetest: "+format+": %w", append(args, ErrInvalidRule)...)}
}

// Offence is one request that breaks a rule, and what is wrong with it in the operator's terms.
type Offence struct {
	Request Request
	Problem string // e.g. `User-Agent "Mozilla/5.0 …", From none`
}

// String is the offence as one line: the request as an operator's log shows it, then the problem.
func (o Offence) String() string { return o.Request.String() + "  " + o.Problem }

// MaxListed is the number of offences a [ViolationError] message lists; the rest are counted.
const MaxListed = 20

// ViolationError is a broken rule: what was expected and which requests broke it.
type ViolationError struct {
	Expected string    // the rule, as [Rule.String] gives it
	Judged   int       // the number of requests judged
	Offences []Offence // in order of arrival
}

func (e *ViolationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "expected %s; broken by %d of %d requests:", e.Expected, len(e.Offences), e.Judged)
	for i, o := range e.Offences {
		if i == MaxListed {
			fmt.Fprintf(&b, "\n  … and %d more", len(e.Offences)-MaxListed)
			break
		}
		b.WriteString("\n  " + o.String())
	}
	return b.String()
}

// TB is the part of testing.TB that [Verify] uses; *testing.T, *testing.B and Ginkgo's
// GinkgoT() satisfy it.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
}

// Verify checks every rule against reqs and reports each broken one with t.Errorf; it returns
// whether all were kept. It is the plain-testing counterpart of the Gomega matchers:
//
//	etiquettetest.Verify(t, site.Requests(), etiquettetest.FetchRobotsTxtFirst(), etiquettetest.SendNoCookies())
func Verify(t TB, reqs []Request, rules ...Rule) bool {
	t.Helper()
	kept := true
	for _, r := range rules {
		if err := r.Check(reqs); err != nil {
			t.Errorf("%v", err)
			kept = false
		}
	}
	return kept
}

// Check judges everything the site recorded — every origin, from the first request on — against
// rules, as Verify(t, s.Requests(), rules...) does: each broken rule is reported with t.Errorf,
// and Check returns whether all were kept. It is the plain-testing counterpart of
// Expect(site).To(matcher). A site that answered requests beyond [MaxRecorded] fails without
// judging anything, because part of the crawl was not recorded.
//
//	site.Check(t, etiquettetest.FetchRobotsTxtFirst(), etiquettetest.SendNoCookies())
func (s *Site) Check(t TB, rules ...Rule) bool {
	t.Helper()
	if n := s.Unrecorded(); n > 0 {
		t.Errorf("etiquettetest: the site answered %d requests beyond the %d it records; judge a shorter crawl", n, MaxRecorded)
		return false
	}
	return Verify(t, s.Requests(), rules...)
}

// quoteOrNone quotes a header's values for a problem description, or says it is absent.
func quoteOrNone(values []string) string {
	switch len(values) {
	case 0:
		return "none"
	case 1:
		return fmt.Sprintf("%q", values[0])
	}
	return fmt.Sprintf("%q", values)
}
