package main

import (
	"fmt"
	"net/url"

	"github.com/politecrawl/etiquette/politeness/robots"
)

// compareColly prints, after our decision, what Colly's built-in robots.txt check (temoto's
// robotstxt, matched on a prefix of the whole User-Agent) would have decided, and flags a
// difference: a migration aid for people moving an existing Colly scraper to etiquette.
func compareColly(e env, body []byte, token, collyUA string, u *url.URL, ours bool) {
	_, collyAllowed, err := robots.CompareColly(body, token, collyUA, u)
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
