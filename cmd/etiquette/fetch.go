package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// runFetch: "fetch IDENTITY-FLAGS URL" — one page for a person, with the user-triggered token,
// no links followed, nothing kept past the run (an in-memory cache, no cookies).
func runFetch(ctx context.Context, args []string, e env) (int, error) {
	fs := newFlagSet("fetch", e)
	var idf identityFlags
	idf.register(fs)
	strict := fs.Bool("strict-robots", false, "also obey rules for * and the crawl token")
	maxWait := fs.Duration("max-wait", 0, "give up when the origin asks to wait longer than this")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return exitUsage, err
	}
	if *strict {
		return exitUsage, errNotYet("--strict-robots")
	}
	if *maxWait != 0 {
		return exitUsage, errNotYet("--max-wait")
	}
	if len(pos) != 1 {
		return exitUsage, usagef("usage: etiquette fetch IDENTITY-FLAGS URL")
	}
	u, err := url.Parse(pos[0])
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return exitUsage, usagef("URL %q: want an absolute http(s) URL", pos[0])
	}
	id, err := idf.identity(e.getenv, func(s string) { fmt.Fprintln(e.stderr, s) })
	if err != nil {
		return exitUsage, err
	}
	// A person's fetch keeps nothing past the run: an in-memory cache (the default for this mode).
	door, err := politeness.NewDoor(politeness.Policy{Identity: id, Mode: politeness.UserTriggered})
	if err != nil {
		return exitUsage, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return exitUsage, usagef("URL %q: %v", pos[0], err)
	}
	start := time.Now()
	resp, err := door.Client().Do(req)
	if err != nil {
		var dis *robots.DisallowedError
		if errors.As(err, &dis) && dis.Decision.Line > 0 {
			fmt.Fprintf(e.stderr, "etiquette: robots.txt blocks %s for %s (line %d: %s)\n", dis.Token, u, dis.Decision.Line, dis.Decision.Rule)
			return exitRobots, nil
		}
		// A robots.txt that could not be read is not the site blocking this token: it is a
		// failure to fetch (exit 1), reported with the reason.
		return exitNo, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(e.stdout, resp.Body)
	fmt.Fprintf(e.stderr, "%s %s (%d bytes, %s)\n", resp.Proto, resp.Status, n, time.Since(start).Round(time.Millisecond))
	if err != nil {
		return exitNo, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return exitNo, nil
	}
	return exitOK, nil
}
