package main

// This file decides the robots command: whether robots.txt lets a crawler fetch a URL, and by
// which rule.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// robotsFileLimit bounds what is read of ROBOTS_FILE: the parser keeps the first 512 KiB
// anyway, so a larger file (or /dev/zero) costs no more than that.
const robotsFileLimit = 1 << 20

var robotsDoc = commandDoc{
	name:  "robots",
	usage: "[--user-triggered [--strict-robots --crawl-token T] | --compare-colly [--colly-ua UA]] ROBOTS_FILE PRODUCT_TOKEN URL",
	about: `Decides URL against a robots.txt file for the crawler PRODUCT_TOKEN names, as RFC 9309 does, and
prints "allowed" or "disallowed", then the deciding rule ("line N: RULE", or "no matching rule").
With --user-triggered it decides as 'etiquette fetch' does for a page a person asked for, with
PRODUCT_TOKEN the user-triggered token (ExampleBot-User): only a group naming that token decides;
with --strict-robots also RFC 9309's group for it (else *) and the group of --crawl-token (else *).
With --compare-colly it then prints what Colly's built-in check (temoto/robotstxt v1.1.2) decides,
and a line starting with DIFFERENT where the two disagree.`,
	args: `  ROBOTS_FILE    a robots.txt file (the first 512 KiB count, as RFC 9309 §2.5 allows)
  PRODUCT_TOKEN  a product token 'etiquette ua build' could produce, under either profile:
                 ExampleBot, ExampleBot-User, FAU-RRZE-Legalcheck (not a whole User-Agent, not *)
  URL            an absolute http(s) URL, e.g. https://example.org/private/page`,
	exits: `  0  allowed
  1  disallowed
  2  unusable input: usage, an unreadable file, a token no crawler can have, a URL that is not
     absolute http(s)`,
}

// inTokenTerms rewrites the identity package's advice about a token for the robots command,
// whose token is an argument rather than a field.
var inTokenTerms = strings.NewReplacer("Identity.Token", "PRODUCT_TOKEN", "Identity.UserToken", "PRODUCT_TOKEN",
	"Identity.Org", "the ORG of FAU-ORG-BOT", "Identity.Bot", "the BOT of FAU-ORG-BOT")

// runRobots: "robots [--user-triggered [--strict-robots --crawl-token T] | --compare-colly] ROBOTS_FILE PRODUCT_TOKEN URL". The first output line is
// "allowed" or "disallowed", the second the deciding rule.
func runRobots(_ context.Context, args []string, e env) (int, error) {
	fs := newFlagSet(robotsDoc)
	compare := fs.Bool("compare-colly", false, "also print what Colly's built-in robots.txt check (temoto/robotstxt v1.1.2) decides")
	collyUA := fs.String("colly-ua", "", "`UA`: with --compare-colly, the whole User-Agent the Colly scraper sent (default: PRODUCT_TOKEN)")
	userTriggered := fs.Bool("user-triggered", false, "decide for a fetch a person asked for: PRODUCT_TOKEN is the user-triggered token")
	strict := fs.Bool("strict-robots", false, "with --user-triggered: also obey RFC 9309's group for PRODUCT_TOKEN (else *) and the group of --crawl-token (else *)")
	crawlToken := fs.String("crawl-token", "", "`T`: with --strict-robots, the crawl token whose group (else *) must allow the URL too")
	pos, err := parseFlags(fs, robotsDoc, args, e)
	if err != nil {
		return exitUsage, err
	}
	switch {
	case *strict && (!*userTriggered || *crawlToken == ""):
		return exitUsage, usagef("--strict-robots needs --user-triggered and --crawl-token T")
	case *crawlToken != "" && !*strict:
		return exitUsage, usagef("--crawl-token only counts with --user-triggered --strict-robots")
	case *userTriggered && *compare:
		return exitUsage, usagef("--compare-colly compares the crawler's reading; leave out --user-triggered")
	}
	if *crawlToken != "" {
		if err := identity.ValidateToken(*crawlToken); err != nil {
			return exitUsage, usagef("--crawl-token: %v", tokenError(*crawlToken, err))
		}
	}
	if len(pos) != 3 {
		return exitUsage, robotsDoc.argErrorf("want 3 arguments, ROBOTS_FILE PRODUCT_TOKEN URL, got %d", len(pos))
	}
	token := pos[1]
	if err := identity.ValidateToken(token); err != nil {
		return exitUsage, tokenError(token, err)
	}
	u, err := httpURL("URL", pos[2])
	if err != nil {
		return exitUsage, err
	}
	body, err := readRobotsFile(pos[0])
	if err != nil {
		return exitUsage, err
	}
	reading := robots.ForCrawler(token)
	if *userTriggered {
		reading = robots.ForUserTriggered(token, *crawlToken, *strict)
	}
	dec, by := reading.Decide(&robots.Entry{Outcome: robots.Parsed, File: robots.Parse(body)}, u)
	verdict := "disallowed"
	if dec.Allowed {
		verdict = "allowed"
	}
	fmt.Fprintln(e.stdout, verdict)
	switch {
	case dec.Line > 0 && *strict:
		// Several groups may decide: say whose rule it was.
		fmt.Fprintf(e.stdout, "line %d: %s (the group for %s: %s)\n", dec.Line, terminalSafe(dec.Rule), by, terminalSafe(dec.Group))
	case dec.Line > 0:
		fmt.Fprintf(e.stdout, "line %d: %s\n", dec.Line, terminalSafe(dec.Rule))
	default:
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

func readRobotsFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, usagef("cannot read the robots.txt file: %v", err)
	}
	defer f.Close()
	body, err := io.ReadAll(io.LimitReader(f, robotsFileLimit))
	if err != nil {
		return nil, usagef("cannot read the robots.txt file: %v", err)
	}
	return body, nil
}

// tokenError says why token cannot name a crawler, one problem per line.
func tokenError(token string, err error) error {
	var ve *identity.ValidationError
	if !errors.As(err, &ve) {
		return usagef("PRODUCT_TOKEN %q: %v", token, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "PRODUCT_TOKEN %q is not a product token a crawler can have (robots.txt groups are matched by it, RFC 9309 §2.2.1):", token)
	for _, p := range ve.Problems {
		fmt.Fprintf(&b, "\n  %s (fix: %s)", inTokenTerms.Replace(p.Message), inTokenTerms.Replace(p.Fix))
	}
	b.WriteString("\ngive the token that starts the crawler's User-Agent, e.g. ExampleBot for ExampleBot/1.0 (+https://example.org/bot)")
	return &usageError{b.String()}
}
