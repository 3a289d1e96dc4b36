package main

import (
	"fmt"
	"io"
	"net/url"
	"os"

	"github.com/politecrawl/etiquette/politeness/robots"
)

// robotsFileLimit bounds what is read of ROBOTS_FILE: the parser keeps the first 512 KiB
// anyway, so a larger file (or /dev/zero) costs no more than that.
const robotsFileLimit = 1 << 20

// runRobots: "robots [--compare-colly] ROBOTS_FILE PRODUCT_TOKEN URL". The first output line is
// "allowed" or "disallowed", the second the deciding rule.
func runRobots(args []string, e env) (int, error) {
	fs := newFlagSet("robots", e)
	compare := fs.Bool("compare-colly", false, "also print what Colly's built-in robots.txt check (temoto/robotstxt) would decide")
	collyUA := fs.String("colly-ua", "", "with --compare-colly: the whole User-Agent the Colly scraper sent (default: PRODUCT_TOKEN)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage, err
	}
	if len(pos) != 3 {
		return exitUsage, usagef("usage: etiquette robots [--compare-colly] ROBOTS_FILE PRODUCT_TOKEN URL")
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return exitUsage, usagef("cannot read the robots.txt file: %v", err)
	}
	defer f.Close()
	body, err := io.ReadAll(io.LimitReader(f, robotsFileLimit))
	if err != nil {
		return exitUsage, usagef("cannot read the robots.txt file: %v", err)
	}
	u, err := url.Parse(pos[2])
	if err != nil {
		return exitUsage, usagef("URL %q does not parse: %v", pos[2], err)
	}
	token := pos[1]
	dec := robots.Parse(body).Decide(token, u)
	verdict := "disallowed"
	if dec.Allowed {
		verdict = "allowed"
	}
	fmt.Fprintln(e.stdout, verdict)
	if dec.Line > 0 {
		fmt.Fprintf(e.stdout, "line %d: %s\n", dec.Line, dec.Rule)
	} else {
		fmt.Fprintln(e.stdout, "no matching rule")
	}
	if *compare {
		compareColly(e, body, token, *collyUA, u, dec.Allowed)
	}
	if !dec.Allowed {
		return exitNo, nil
	}
	return exitOK, nil
}
