// This file decides the rules about which paths a crawler asks for, and in what order.

package etiquettetest

import (
	"fmt"
	"strings"
	"time"
)

// FetchRobotsTxtFirst expects a crawler to read each origin's robots.txt before anything else
// there (RFC 9309 §2.3.1): every other request to an origin must arrive after a request for its
// /robots.txt was answered with a status other than 3xx (a redirect hop is not yet the file).
// Requests for /robots.txt itself are never judged.
func FetchRobotsTxtFirst() Rule {
	return Rule{expect: "each origin's robots.txt to be answered before any other request arrives there", judge: func(reqs []Request) []Offence {
		answered := map[string]time.Time{} // origin → when its robots.txt was first answered
		for _, r := range reqs {
			if r.Path() != "/robots.txt" || r.Done.IsZero() || r.Status == 0 || r.Status/100 == 3 {
				continue
			}
			if t, ok := answered[r.Origin]; !ok || r.Done.Before(t) {
				answered[r.Origin] = r.Done
			}
		}
		var out []Offence
		for _, r := range reqs {
			if r.Path() == "/robots.txt" {
				continue
			}
			t, ok := answered[r.Origin]
			switch {
			case !ok:
				out = append(out, Offence{r, "robots.txt was never answered at this origin"})
			case r.At.Before(t):
				out = append(out, Offence{r, "arrived before robots.txt was answered (" + t.Format("15:04:05.000") + ")"})
			}
		}
		return out
	}}
}

// NeverRequest expects no request for the given paths. Each is matched against the path and
// query as sent, like a robots.txt Disallow rule without wildcards: "/private" matches
// "/private", "/private/x" and "/private?q"; a trailing "$" asks for an exact match ("/x$").
func NeverRequest(paths ...string) Rule {
	if len(paths) == 0 {
		return invalid("NeverRequest: no paths given")
	}
	for _, p := range paths {
		if !strings.HasPrefix(p, "/") {
			return invalid("NeverRequest: %q is not a path; paths start with /", p)
		}
	}
	return Rule{expect: "no request for " + strings.Join(paths, ", "), judge: func(reqs []Request) []Offence {
		var out []Offence
		for _, r := range reqs {
			for _, p := range paths {
				exact, isExact := strings.CutSuffix(p, "$")
				if (isExact && r.Target == exact) || (!isExact && strings.HasPrefix(r.Target, p)) {
					out = append(out, Offence{r, fmt.Sprintf("matches %s", p)})
					break
				}
			}
		}
		return out
	}}
}

// ProbeNoWellKnown expects a crawler not to guess at /.well-known/ URLs (RFC 8615): a request
// for a path under /.well-known/ is allowed only when an answer the site sent before it arrived
// mentioned that URL — in a page, a sitemap, robots.txt, any body, or a Location or Link header
// (see [Request.WellKnown]). Apply it to the whole recording, which holds those answers.
func ProbeNoWellKnown() Rule {
	return Rule{expect: "no request for a /.well-known/ URL that the site had not mentioned", judge: func(reqs []Request) []Offence {
		mentioned := map[string]time.Time{} // URL → when an answer first mentioned it
		for _, r := range reqs {
			for _, u := range r.WellKnown {
				if t, ok := mentioned[u]; !ok || r.Done.Before(t) {
					mentioned[u] = r.Done
				}
			}
		}
		var out []Offence
		for _, r := range reqs {
			if !strings.HasPrefix(r.Path(), wellKnownPrefix) {
				continue
			}
			if t, ok := mentioned[r.Origin+r.Path()]; !ok || r.At.Before(t) {
				out = append(out, Offence{r, "a probe: no earlier answer of the site mentioned this URL"})
			}
		}
		return out
	}}
}
