package robots

import (
	"fmt"
	"net/url"

	"github.com/temoto/robotstxt"
)

// CompareColly decides u against body twice: with this package (ours, for product token
// token) and the way Colly v2's built-in check does with temoto/robotstxt v1.1.2 (collyAllowed,
// for userAgent, the whole User-Agent string Colly matches by prefix; "" means token). It is a
// migration aid: it shows what an existing Colly scraper decided where the two differ.
//
// err is non-nil when temoto cannot parse body; Colly then fails every request to the site
// (collyAllowed is false). Status codes are out of scope: Colly allows every URL of a site
// whose robots.txt answers 4xx or 5xx (DESIGN.md §2), while [Keeper] disallows on 5xx.
func CompareColly(body []byte, token, userAgent string, u *url.URL) (ours Decision, collyAllowed bool, err error) {
	ours = Parse(body).Decide(token, u)
	if userAgent == "" {
		userAgent = token
	}
	data, err := robotstxt.FromBytes(body)
	if err != nil {
		return ours, false, fmt.Errorf("temoto/robotstxt v1.1.2 (Colly's robots.txt check) cannot parse this file, so Colly fails every request to the site: %w", err)
	}
	return ours, collyTest(data, userAgent, u), nil
}

// collyTest repeats Colly v2.3.0's checkRobots after the fetch: the group found by prefix of
// the whole User-Agent, tested with the escaped path and the query re-encoded by url.Values.
func collyTest(data *robotstxt.RobotsData, userAgent string, u *url.URL) bool {
	g := data.FindGroup(userAgent)
	if g == nil {
		return true
	}
	if u == nil {
		return g.Test("/")
	}
	p := u.EscapedPath()
	if u.RawQuery != "" {
		p += "?" + u.Query().Encode()
	}
	return g.Test(p)
}
