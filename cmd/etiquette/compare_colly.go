package main

// This file decides what Colly's built-in robots.txt check would have answered, for people
// migrating a Colly scraper (robots --compare-colly). It is the only place outside tests that
// uses temoto/robotstxt.

import (
	"fmt"
	"net/url"

	"github.com/temoto/robotstxt"
)

// compareColly prints, after our decision (ours), what Colly's built-in robots.txt check would
// have decided for the same file and URL, and flags a difference.
func compareColly(e env, body []byte, token, collyUA string, u *url.URL, ours bool) {
	if collyUA == "" {
		collyUA = token
	}
	collyAllowed, err := collyDecide(body, collyUA, u)
	if err != nil {
		fmt.Fprintf(e.stdout, "colly: disallowed (%v)\n", err)
	} else if collyAllowed {
		fmt.Fprintln(e.stdout, "colly: allowed")
	} else {
		fmt.Fprintln(e.stdout, "colly: disallowed")
	}
	if err == nil && collyAllowed != ours {
		fmt.Fprintln(e.stdout, "DIFFERENT: Colly's built-in check decides otherwise (etiquette follows RFC 9309)")
	} else if err != nil && ours {
		fmt.Fprintln(e.stdout, "DIFFERENT: Colly would refuse every URL of this site")
	}
}

// collyDecide decides u against body the way Colly v2.3.0's built-in check does, with
// temoto/robotstxt v1.1.2, for userAgent: the whole User-Agent string, whose group Colly finds by
// prefix.
//
// err is non-nil when temoto cannot parse body; Colly then fails every request to the site.
// Status codes are out of scope: Colly allows every URL of a site whose robots.txt answers 4xx or
// 5xx, while the door disallows on 5xx (RFC 9309 §2.3.1.4).
func collyDecide(body []byte, userAgent string, u *url.URL) (allowed bool, err error) {
	data, err := robotstxt.FromBytes(body)
	if err != nil {
		return false, fmt.Errorf("temoto/robotstxt v1.1.2 (Colly's robots.txt check) cannot parse this file, so Colly fails every request to the site: %w", err)
	}
	// Colly's checkRobots after the fetch: the group found by prefix of the whole User-Agent,
	// tested with the escaped path and the query re-encoded by url.Values. FindGroup never
	// returns nil: without a matching group it returns an empty one, which allows everything.
	g := data.FindGroup(userAgent)
	p := u.EscapedPath()
	if u.RawQuery != "" {
		p += "?" + u.Query().Encode()
	}
	return g.Test(p), nil
}
