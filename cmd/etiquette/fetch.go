package main

// This file decides the fetch command: one page for a person, with the user-triggered token,
// and what its outcome means as an exit code.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/kind"
)

var fetchDoc = commandDoc{
	name:  "fetch",
	usage: "IDENTITY-FLAGS [flags] URL",
	about: `Fetches one page for a person, with the user-triggered token (<token>-User, or --user-token).
No link is followed, and nothing is kept past the run (an in-memory cache, no cookies, no file).
The body goes to stdout; the status line, or why nothing was fetched, to stderr.

robots.txt: only a group that names the user-triggered token decides; its Disallow blocks the
fetch (exit 3, with the rule). When no group names it, the fetch is allowed: the crawl token's
group and the * group are about crawling, not about one page a person asked for. With
--strict-robots the fetch is also blocked when RFC 9309's group selection for the user-triggered
token (its own group, else *) disallows it, or when the crawl token's group (its own, else *) does.
A robots.txt that cannot be read (5xx, 429, unreachable) blocks the fetch in both readings.

Waiting: a person waits for the origin's turn (the 3-per-second budget, a Crawl-delay, a
Retry-After) up to --max-wait; when the site already asked for a longer wait, the fetch fails at
once (exit 1) and no request is sent early.`,
	args: `  URL  an absolute http(s) URL`,
	exits: `  0    a 2xx answer
  1    not a 2xx, or nothing could be fetched (robots.txt unreachable, a network error, a wait
       longer than --max-wait)
  2    unusable input: usage, an invalid identity or URL, an unsupported flag
  3    robots.txt blocks the user-triggered token
  130  interrupted (SIGINT)`,
	identity: true,
}

// runFetch: "fetch IDENTITY-FLAGS URL" — one page for a person, with the user-triggered token,
// no links followed, nothing kept past the run (an in-memory cache, no cookies).
func runFetch(ctx context.Context, args []string, e env) (int, error) {
	fs := newFlagSet(fetchDoc)
	var idf identityFlags
	idf.register(fs)
	strict := fs.Bool("strict-robots", false, "also obey RFC 9309's group for the user-triggered token (else *) and the crawl token's group (else *)")
	maxWait := fs.Duration("max-wait", politeness.DefaultMaxWait, "`DURATION`: wait for the origin's turn at most this long, else fail at once (0: the default)")
	pos, err := parseFlags(fs, fetchDoc, args, e)
	if err != nil {
		return exitUsage, err
	}
	switch {
	case *maxWait < 0:
		return exitUsage, usagef("--max-wait %s: want a positive duration, such as 10s", *maxWait)
	case *maxWait == 0:
		*maxWait = politeness.DefaultMaxWait
	}
	if len(pos) != 1 {
		return exitUsage, fetchDoc.argErrorf("want one URL, got %d arguments", len(pos))
	}
	u, err := httpURL("URL", pos[0])
	if err != nil {
		return exitUsage, err
	}
	id, err := idf.identity(e.getenv, e.warn)
	if err != nil {
		return exitUsage, err
	}
	// The last pause tells a refusal which answer paused the origin (a 429 to robots.txt, say).
	bus, pause := &events.Bus{}, &lastPause{}
	bus.Subscribe(pause.note)
	// A person's fetch keeps nothing past the run: an in-memory cache (the default for this mode).
	door, err := politeness.NewDoor(politeness.Policy{Identity: id, Mode: politeness.UserTriggered,
		StrictRobots: *strict, MaxWait: *maxWait, Events: bus})
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
		if dis, ok := blockedByRule(err); ok {
			group := ""
			if g := dis.Decision.Group; g != "" && !strings.EqualFold(g, dis.Token) {
				group = "the " + g + " group, "
			}
			fmt.Fprintf(e.stderr, "etiquette fetch: robots.txt blocks %s for %s (%sline %d: %s)\n",
				dis.Token, u, terminalSafe(group), dis.Decision.Line, terminalSafe(dis.Decision.Rule))
			return exitRobots, nil
		}
		var tl *hostclock.WaitTooLongError
		if errors.As(err, &tl) {
			return exitNo, tooLong(tl, *maxWait, pause.get())
		}
		if errors.Is(err, politeness.ErrMaxWaitPassed) {
			return exitNo, fmt.Errorf("waited %s (--max-wait) for the site's turn%s: %w", roughly(*maxWait), pausedBy(pause.get()), withoutRequest(err))
		}
		// Anything else — robots.txt unreachable among them — is a failure to fetch (exit 1),
		// told in the library's words.
		return exitNo, withoutRequest(err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(e.stdout, resp.Body)
	var cut *politeness.BodyTooLargeError
	if errors.As(err, &cut) {
		// Not a 200 like any other: the page ends where the cap cut it.
		fmt.Fprintf(e.stderr, "%s %s, cut at %d bytes: the body is longer than the cap (%s)\n",
			resp.Proto, terminalSafe(resp.Status), n, time.Since(start).Round(time.Millisecond))
		return exitNo, err
	}
	fmt.Fprintf(e.stderr, "%s %s (%d bytes, %s)\n", resp.Proto, terminalSafe(resp.Status), n, time.Since(start).Round(time.Millisecond))
	if err != nil {
		return exitNo, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return exitNo, nil
	}
	return exitOK, nil
}

// tooLong is the refusal of a wait past --max-wait: why the origin waits, and a --max-wait that
// would have been enough — the time already spent waiting counts, since the bound covers the
// whole fetch (redirect hops and re-sends included).
func tooLong(tl *hostclock.WaitTooLongError, maxWait time.Duration, paused events.Event) error {
	spent := max(maxWait-tl.Left, 0)
	enough := (spent + tl.Wait).Truncate(time.Second) + time.Second
	bound := "not waiting longer than " + roughly(maxWait)
	if spent >= 500*time.Millisecond {
		bound = fmt.Sprintf("%s already spent, that is past --max-wait %s", roughly(spent), roughly(maxWait))
	}
	return fmt.Errorf("%s; %s (try again after %s, or pass --max-wait %s)",
		askedToWait(tl, paused), bound, time.Now().Add(tl.Wait).Format(time.TimeOnly), enough)
}

// lastPause keeps the door's last Paused event: the answer that paused the origin.
type lastPause struct {
	mu sync.Mutex
	ev events.Event
}

func (p *lastPause) note(e events.Event) {
	if e.Type == events.Paused {
		p.mu.Lock()
		p.ev = e
		p.mu.Unlock()
	}
}

func (p *lastPause) get() events.Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ev
}

// pausedBy names the answer that paused the origin, when one did: " (robots.txt answered 429 Too
// Many Requests, so the origin is paused)".
func pausedBy(paused events.Event) string {
	if paused.Status == 0 {
		return ""
	}
	who := "the site"
	if paused.Kind == kind.Robots {
		who = "robots.txt"
	}
	return fmt.Sprintf(" (%s answered %d %s, so the origin is paused)", who, paused.Status, http.StatusText(paused.Status))
}

// askedToWait says, for a person, why the origin could not start in time: "the site asked us to
// wait 60s (Retry-After)", "robots.txt asks for 30s between requests (Crawl-delay)", …. paused is
// the door's last Paused event, which names the answer behind a backoff.
func askedToWait(tl *hostclock.WaitTooLongError, paused events.Event) string {
	wait := roughly(tl.Wait)
	switch tl.Reason {
	case hostclock.ReasonRetryAfter:
		return "the site asked us to wait " + wait + " (Retry-After)"
	case hostclock.ReasonBackoff:
		if paused.Status != 0 {
			to := ""
			if paused.Kind == kind.Robots {
				to = " to robots.txt"
			}
			return fmt.Sprintf("the site answered %d %s%s without Retry-After, so it gets a pause of %s (backoff)",
				paused.Status, http.StatusText(paused.Status), to, wait)
		}
		return "the site answered with errors, so it gets a pause of " + wait + " (backoff)"
	case hostclock.ReasonCrawlDelay:
		return "robots.txt asks for a gap between requests: the next may start in " + wait + " (Crawl-delay)"
	case hostclock.ReasonLatency:
		return "the site answers slowly, so requests to it are spaced: the next may start in " + wait
	case hostclock.ReasonRate:
		return "the site's budget of requests per second is spent: the next may start in " + wait
	}
	return "the site is paused for " + wait + " (" + tl.Reason + ")"
}

// roughly formats d for a person: "60 s" from 10 s on, "2.5 s" from 1 s, "300 ms" below.
func roughly(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return fmt.Sprintf("%d s", d.Round(time.Second)/time.Second)
	case d >= time.Second:
		return strconv.FormatFloat(d.Round(100*time.Millisecond).Seconds(), 'f', -1, 64) + " s"
	}
	return fmt.Sprintf("%d ms", d.Round(time.Millisecond)/time.Millisecond)
}
