package report_test

import (
	"errors"
	"maps"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/robots"
	"github.com/politecrawl/etiquette/report"
)

var t0 = time.Date(2026, 1, 15, 9, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// The constructors below build events as the door emits them (politeness/robots_gate.go,
// hostclock/layer.go, backoff, cache, report layer, cookies layer).

func admitted(ms int, u string) events.Event {
	return events.Event{Time: at(ms), Type: events.Admitted, URL: u, Origin: "a.test", Kind: kind.HTML, Method: "GET"}
}

func waited(ms int, u, reason string, waitMS int) events.Event {
	return events.Event{Time: at(ms), Type: events.Waited, URL: u, Origin: "a.test", Kind: kind.HTML, Method: "GET",
		Reason: reason, Wait: time.Duration(waitMS) * time.Millisecond}
}

func response(ms int, u string, status int, cache string, bytes int64) events.Event {
	k := kind.HTML
	if strings.HasSuffix(u, "/robots.txt") {
		k = kind.Robots
	}
	return events.Event{Time: at(ms), Type: events.Response, URL: u, Origin: "a.test", Kind: k, Method: "GET",
		Status: status, Cache: cache, Bytes: bytes}
}

func retried(ms int, u string, status int) events.Event {
	return events.Event{Time: at(ms), Type: events.Retried, URL: u, Origin: "a.test", Kind: kind.HTML, Method: "GET",
		Status: status, Reason: "retry-after", Wait: 2 * time.Second}
}

func paused(ms int, reason string, untilMS int) events.Event {
	return events.Event{Time: at(ms), Type: events.Paused, URL: "http://a.test/p", Origin: "a.test", Status: 429,
		Reason: reason, Until: at(untilMS), Wait: at(untilMS).Sub(at(ms))}
}

// blocked is a robots refusal whose Detail is the text of a real robots.DisallowedError.
func blocked(ms int, robotsTxt, path string) events.Event {
	u, _ := url.Parse("http://a.test" + path)
	var derr *robots.DisallowedError
	if robotsTxt == "" {
		derr = &robots.DisallowedError{URL: u.String(), Token: "DemoBot", Decision: robots.Decision{
			Reason: "robots.txt answered 503: treating the origin as disallowed until 2026-01-15 09:01:00 UTC (RFC 9309 §2.3.1.4)"}}
	} else {
		derr = &robots.DisallowedError{URL: u.String(), Token: "DemoBot", Decision: robots.Parse([]byte(robotsTxt)).Decide("DemoBot", u)}
	}
	return events.Event{Time: at(ms), Type: events.Refused, URL: u.String(), Origin: "a.test", Kind: kind.HTML,
		Method: "GET", Reason: "robots", Detail: derr.Error(), Err: derr}
}

func cookie(ms int, detail string) events.Event {
	// The cookies layer names the URL only; the purpose jar names the origin in its place.
	return events.Event{Time: at(ms), Type: events.Notice, URL: "http://a.test", Reason: "cookie-refused", Detail: detail}
}

const robotsTxt = "User-agent: *\nDisallow: /admin/\n\nUser-agent: DemoBot\nDisallow: /admin/\nDisallow: /drafts/\n"

func TestFigures(t *testing.T) {
	tests := []struct {
		name   string
		events []events.Event
		found  map[string]string // URL → found_via
		check  func(t *testing.T, o report.Origin)
	}{
		{
			name: "three starts a second, evenly spaced, one after a wait",
			events: []events.Event{
				response(0, "http://a.test/robots.txt", 200, "miss", 40),
				admitted(333, "http://a.test/"), response(340, "http://a.test/", 200, "miss", 1000),
				admitted(500, "http://a.test/a"), waited(666, "http://a.test/a", "rate", 166), response(700, "http://a.test/a", 200, "miss", 1000),
				admitted(1000, "http://a.test/b"), response(1010, "http://a.test/b", 200, "miss", 1000),
			},
			check: func(t *testing.T, o report.Origin) {
				want(t, "requests", o.Requests, 4)
				want(t, "busiest second", o.BusiestSecond, 3)
				want(t, "first start (robots.txt, not waited: its answer)", o.FirstStart, at(0))
				want(t, "last start", o.LastStart, at(1000))
				if o.StartsPerSecond < 2.99 || o.StartsPerSecond > 3.02 {
					t.Errorf("starts/s = %.3f, want 3 (3 intervals over 1 s)", o.StartsPerSecond)
				}
				want(t, "waits", o.Waits, map[string]report.Wait{"rate": {Count: 1, Total: 166 * time.Millisecond}})
				want(t, "robots.txt status", o.Robots.Status, 200)
				want(t, "allowed", o.Robots.Allowed, 3)
				want(t, "statuses", o.Statuses, map[int]int{200: 4})
				want(t, "bytes received", o.BytesReceived, int64(3040))
			},
		},
		{
			name: "four starts within one second break the budget",
			events: []events.Event{
				admitted(0, "http://a.test/1"), response(10, "http://a.test/1", 200, "", 1),
				admitted(200, "http://a.test/2"), response(210, "http://a.test/2", 200, "", 1),
				admitted(400, "http://a.test/3"), response(410, "http://a.test/3", 200, "", 1),
				admitted(999, "http://a.test/4"), response(1005, "http://a.test/4", 200, "", 1),
			},
			check: func(t *testing.T, o report.Origin) {
				want(t, "busiest second", o.BusiestSecond, 4)
				want(t, "cache outcomes (the cache took no part)", o.Cache, map[string]int(nil))
			},
		},
		{
			name: "a 429 with Retry-After: 2, honoured",
			events: []events.Event{
				admitted(0, "http://a.test/p"), retried(50, "http://a.test/p", 429), paused(50, "retry-after", 2050),
				waited(2050, "http://a.test/p", "retry-after", 2000), response(2060, "http://a.test/p", 200, "miss", 10),
			},
			check: func(t *testing.T, o report.Origin) {
				want(t, "requests", o.Requests, 2)
				want(t, "retries", o.Retries, 1)
				want(t, "statuses", o.Statuses, map[int]int{429: 1, 200: 1})
				want(t, "Retry-After", o.RetryAfter, report.Pauses{Count: 1, Total: 2 * time.Second, Honoured: 1})
				want(t, "first start", o.FirstStart, at(0))
				want(t, "last start", o.LastStart, at(2050))
			},
		},
		{
			name: "a request inside the pause breaks it",
			events: []events.Event{
				admitted(0, "http://a.test/p"), retried(50, "http://a.test/p", 429), paused(50, "retry-after", 2050),
				admitted(1000, "http://a.test/q"), response(1010, "http://a.test/q", 200, "miss", 10),
				waited(2050, "http://a.test/p", "retry-after", 2000), response(2060, "http://a.test/p", 200, "miss", 10),
			},
			check: func(t *testing.T, o report.Origin) {
				want(t, "Retry-After", o.RetryAfter, report.Pauses{Count: 1, Total: 2 * time.Second, Honoured: 0})
			},
		},
		{
			name:   "a backoff pause is counted apart from Retry-After",
			events: []events.Event{paused(0, "backoff", 2000)},
			check: func(t *testing.T, o report.Origin) {
				want(t, "backoff", o.Backoff, report.Pauses{Count: 1, Total: 2 * time.Second, Honoured: 1})
				want(t, "Retry-After", o.RetryAfter, report.Pauses{})
			},
		},
		{
			name: "robots.txt refusals are grouped by the deciding rule",
			events: []events.Event{
				blocked(0, robotsTxt, "/drafts/one"), blocked(1, robotsTxt, "/drafts/two"), blocked(2, robotsTxt, "/admin/x"),
				blocked(3, "", "/anything"),
			},
			check: func(t *testing.T, o report.Origin) {
				want(t, "blocked", o.Robots.Blocked, 4)
				want(t, "rules", o.Robots.Rules, []report.RuleCount{
					{Rule: `line 6 "Disallow: /drafts/"`, Blocked: 2, Example: "http://a.test/drafts/one"},
					{Rule: `line 5 "Disallow: /admin/"`, Blocked: 1, Example: "http://a.test/admin/x"},
					{Rule: "robots.txt answered 503", Blocked: 1, Example: "http://a.test/anything"},
				})
				want(t, "not sent", o.Refused, map[string]int{"robots": 4})
				want(t, "requests", o.Requests, 0)
			},
		},
		{
			name: "cache outcomes and the bytes the site did not send",
			events: []events.Event{
				admitted(0, "http://a.test/fresh"), response(1, "http://a.test/fresh", 200, "fresh", 100),
				admitted(400, "http://a.test/304"), response(410, "http://a.test/304", 200, "revalidated", 200),
				admitted(800, "http://a.test/new"), response(810, "http://a.test/new", 200, "miss", 50),
			},
			check: func(t *testing.T, o report.Origin) {
				want(t, "requests (a fresh hit is none)", o.Requests, 2)
				want(t, "cache", o.Cache, map[string]int{"fresh": 1, "revalidated": 1, "miss": 1})
				want(t, "bytes not sent", o.BytesNotSent, int64(300))
				want(t, "bytes received", o.BytesReceived, int64(50))
			},
		},
		{
			name:   "cookies refused by category, from notices that name only a URL",
			events: []events.Event{cookie(0, "analytics: _ga"), cookie(1, "analytics: _gid"), cookie(2, "consent: CookieConsent")},
			check: func(t *testing.T, o report.Origin) {
				want(t, "cookies", o.CookiesRefused, map[string]int{"analytics": 2, "consent": 1})
			},
		},
		{
			name:   "URLs per discovery source, from the caller",
			events: []events.Event{admitted(0, "http://a.test/")},
			found:  map[string]string{"http://a.test/": "start", "http://a.test/x": "link", "http://a.test/y": "link", "http://a.test/z": "sitemap"},
			check: func(t *testing.T, o report.Origin) {
				want(t, "found", o.Found, map[string]int{"start": 1, "link": 2, "sitemap": 1})
			},
		},
		{
			name:   "other notices by reason",
			events: []events.Event{{Time: at(0), Type: events.Notice, Origin: "a.test", Reason: "latency", Wait: time.Second}},
			check: func(t *testing.T, o report.Origin) {
				want(t, "notices", o.Notices, map[string]int{"latency": 1})
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var found report.Found
			for u, via := range tt.found {
				found.Add(u, via)
			}
			rep := report.Summarize(tt.events, &found, report.Options{})
			if len(rep.Origins) != 1 || rep.Origins[0].Origin != "a.test" {
				t.Fatalf("origins %+v, want only a.test", rep.Origins)
			}
			o := rep.Origins[0]
			want(t, "budget", o.Budget, 3.0)
			tt.check(t, o)
		})
	}
}

func want[T any](t *testing.T, what string, got, wanted T) {
	t.Helper()
	if !reflect.DeepEqual(got, wanted) {
		t.Errorf("%s = %+v, want %+v", what, got, wanted)
	}
}

func TestOriginsAndBudgets(t *testing.T) {
	evs := []events.Event{
		{Time: at(0), Type: events.Admitted, URL: "http://b.test:8080/", Origin: "b.test:8080"},
		{Time: at(1), Type: events.Admitted, URL: "http://a.test/", Origin: "a.test"},
		{Time: at(2), Type: events.Notice, Reason: "door-bypassed", Detail: "SetProxy after Polite"},
	}
	var found report.Found
	found.Add("http://c.test/", "start")
	found.Add("::not a url", "link")
	rep := report.Summarize(evs, &found, report.Options{Rate: 2, AuthorizedRates: map[string]float64{"b.test:8080": 10}})
	budgets := map[string]float64{}
	for _, o := range rep.Origins {
		budgets[o.Origin] = o.Budget
	}
	want(t, "origins and budgets", budgets, map[string]float64{"(no origin)": 2, "a.test": 2, "b.test:8080": 10, "c.test": 2})
	want(t, "events", rep.Events, 3)
	want(t, "span", rep.End.Sub(rep.Start), 2*time.Millisecond)
}

func TestRecorderIsSafeForConcurrentUse(t *testing.T) {
	r := report.NewRecorder(report.Options{})
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 100 {
				u := "http://a.test/" + string(rune('a'+g)) + "/" + string(rune('0'+i%10))
				r.Record(admitted(i, u))
				r.Record(response(i+1, u, 200, "miss", 1))
			}
		}()
	}
	for range 4 {
		<-done
	}
	rep := r.Report(nil)
	want(t, "requests", rep.Origins[0].Requests, 400)
}

func TestReportIsACopy(t *testing.T) {
	r := report.NewRecorder(report.Options{})
	r.Record(response(0, "http://a.test/", 200, "miss", 1))
	first := r.Report(nil)
	statuses := maps.Clone(first.Origins[0].Statuses)
	r.Record(response(1, "http://a.test/", 404, "miss", 1))
	want(t, "statuses of the first report", first.Origins[0].Statuses, statuses)
}

func TestWriteTextNamesEveryFigure(t *testing.T) {
	evs := []events.Event{
		response(5, "http://a.test/robots.txt", 200, "miss", 40),
		admitted(0, "http://a.test/p"), retried(50, "http://a.test/p", 429), paused(50, "retry-after", 2050),
		waited(2050, "http://a.test/p", "retry-after", 2000), response(2060, "http://a.test/p", 200, "revalidated", 10),
		blocked(2100, robotsTxt, "/drafts/x"), cookie(2200, "analytics: _ga"),
	}
	var found report.Found
	found.Add("http://a.test/p", "sitemap")
	var b strings.Builder
	if err := report.Summarize(evs, &found, report.Options{}).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"a.test\n", "requests     3 (1 of them re-sent)", "within the budget of 3/s", "statuses     200 1, 304 1 (revalidated: the cache's copy served), 429 1",
		"waits        retry-after 1 (2.0 s)", `blocked 1 by line 6 "Disallow: /drafts/" ×1`, "Retry-After 1 (2.0 s), 1 honoured",
		"revalidated 1", "10 B the site did not send", "refused: analytics 1", "found via    sitemap 1"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("the text lacks %q:\n%s", s, b.String())
		}
	}
}

func TestNilFoundCountsNothing(t *testing.T) {
	var f *report.Found
	f.Add("http://a.test/", "start")
	if rep := report.Summarize(nil, f, report.Options{}); len(rep.Origins) != 0 || rep.Events != 0 {
		t.Errorf("report of nothing: %+v", rep)
	}
	var b strings.Builder
	if err := report.Summarize(nil, nil, report.Options{}).WriteText(&b); err != nil || !strings.Contains(b.String(), "no events") {
		t.Errorf("text of nothing: %q, %v", b.String(), err)
	}
	if !errors.Is(&report.LineError{Err: report.ErrMalformed}, report.ErrMalformed) {
		t.Error("a LineError does not unwrap to its cause")
	}
}
