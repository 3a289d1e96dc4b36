// This file decides the rules about what each request carries: identity, cookies and
// validators.

package etiquettetest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// IdentifyEveryRequestAs expects every request — robots.txt, pages, redirect hops, retries —
// to carry exactly one User-Agent equal to userAgent and, when from is not empty, exactly one
// From equal to from (RFC 9110 §10.1.2, §10.1.5).
func IdentifyEveryRequestAs(userAgent, from string) Rule {
	if userAgent == "" {
		return invalid("IdentifyEveryRequestAs: an empty User-Agent; pass the one the crawler sends")
	}
	expect := fmt.Sprintf("every request to identify as User-Agent %q", userAgent)
	if from != "" {
		expect += fmt.Sprintf(" with From %q", from)
	}
	return Rule{expect: expect, judge: func(reqs []Request) []Offence {
		var out []Offence
		for _, r := range reqs {
			ua, fr := r.Header.Values("User-Agent"), r.Header.Values("From")
			if !slices.Equal(ua, []string{userAgent}) || (from != "" && !slices.Equal(fr, []string{from})) {
				out = append(out, Offence{r, "User-Agent " + quoteOrNone(ua) + ", From " + quoteOrNone(fr)})
			}
		}
		return out
	}}
}

// SendNoCookies expects no request to carry a Cookie header.
func SendNoCookies() Rule {
	return cookieRule("no request to carry a cookie", nil)
}

// SendOnlyCookies expects the Cookie headers of every request to name only the given cookies
// (names are case-sensitive, RFC 6265 §5.3). A Cookie header that cannot be read breaks it.
// Without names it is [SendNoCookies].
func SendOnlyCookies(names ...string) Rule {
	if len(names) == 0 {
		return SendNoCookies()
	}
	return cookieRule("no request to carry a cookie other than "+strings.Join(names, ", "), names)
}

func cookieRule(expect string, allowed []string) Rule {
	return Rule{expect: expect, judge: func(reqs []Request) []Offence {
		var out []Offence
		for _, r := range reqs {
			var refused []string
			for _, line := range r.Header.Values("Cookie") {
				cookies, err := http.ParseCookie(line)
				if err != nil {
					refused = append(refused, "(unreadable)")
					continue
				}
				for _, c := range cookies {
					if !slices.Contains(allowed, c.Name) {
						refused = append(refused, c.Name)
					}
				}
			}
			if len(refused) > 0 {
				out = append(out, Offence{r, "Cookie " + quoteOrNone(r.Header.Values("Cookie")) + " (not allowed: " + strings.Join(refused, ", ") + ")"})
			}
		}
		return out
	}}
}

// RevalidateWith304 expects a crawler that already holds the site's pages to ask whether they
// changed instead of downloading them again. Apply it to the requests of a second crawl of an
// unchanged site (site.Since(mark)). Precisely: every GET or HEAD whose answer carries a
// validator (ETag or Last-Modified) must be conditional — carry If-None-Match or
// If-Modified-Since (RFC 9110 §13.1) — and must have been answered 304 Not Modified, which an
// unchanged site does when the validator matches. Requests with other methods, requests whose
// answer has no validator (redirects, errors, pages served without one) and requests not yet
// answered are not judged.
func RevalidateWith304() Rule {
	return Rule{expect: "every request for a URL served with a validator to be conditional and answered 304", judge: func(reqs []Request) []Offence {
		var out []Offence
		for _, r := range reqs {
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				continue
			}
			validators := validatorsOf(r.Answer)
			if validators == "" {
				continue
			}
			inm, ims := r.Header.Values("If-None-Match"), r.Header.Values("If-Modified-Since")
			switch {
			case len(inm) == 0 && len(ims) == 0:
				out = append(out, Offence{r, fmt.Sprintf("unconditional (no If-None-Match or If-Modified-Since) though the site gives %s; answered %d", validators, r.Status)})
			case !r.NotModified():
				out = append(out, Offence{r, fmt.Sprintf("If-None-Match %s, If-Modified-Since %s did not match %s; answered %d", quoteOrNone(inm), quoteOrNone(ims), validators, r.Status)})
			}
		}
		return out
	}}
}

// validatorsOf describes the validators of an answer, or returns "" when it has none.
func validatorsOf(answer http.Header) string {
	var v []string
	if etag := answer.Get("ETag"); etag != "" {
		v = append(v, "ETag "+etag)
	}
	if lm := answer.Get("Last-Modified"); lm != "" {
		v = append(v, "Last-Modified "+lm)
	}
	return strings.Join(v, " and ")
}
