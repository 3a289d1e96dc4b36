package report_test

// Tests of issue 27: a report a reader understands without us (names, the 304s, one count per
// refusal, the lowered budget, the page's typeface).

import (
	"regexp"
	"strings"
	"testing"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/report"
)

func text(t *testing.T, r *report.Report) string {
	t.Helper()
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func page(t *testing.T, r *report.Report) string {
	t.Helper()
	var b strings.Builder
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestARevalidationShowsAsThe304TheSiteSent(t *testing.T) {
	evs := []events.Event{
		admitted(0, "http://a.test/p"), response(10, "http://a.test/p", 200, "revalidated", 10),
		admitted(400, "http://a.test/q"), response(410, "http://a.test/q", 200, "miss", 10),
	}
	r := report.Summarize(evs, nil, report.Options{})
	want(t, "statuses", r.Origins[0].Statuses, map[int]int{200: 1, 304: 1})
	if s := text(t, r); !strings.Contains(s, "statuses     200 1, 304 1 (revalidated: the cache's copy served)\n") {
		t.Errorf("the text does not show the 304 as a revalidation:\n%s", s)
	}
}

func TestLabelsNameTheOrigins(t *testing.T) {
	evs := []events.Event{admitted(0, "http://a.test/p"), response(10, "http://a.test/p", 200, "miss", 10),
		{Time: at(20), Type: events.Admitted, URL: "http://b.test/", Origin: "b.test"}}
	labelled := report.Summarize(evs, nil, report.Options{Labels: map[string]string{"a.test": "blog"}})
	// Listed by name, as a reader looks them up: b.test before blog (a.test).
	want(t, "names", []string{labelled.Origins[0].Name, labelled.Origins[1].Name}, []string{"b.test", "blog (a.test)"})
	if s := text(t, labelled); !strings.Contains(s, "\nblog (a.test)\n  requests") || !strings.Contains(s, "\nb.test\n") {
		t.Errorf("the text does not head the origins with their names:\n%s", s)
	}
	if s := page(t, labelled); !strings.Contains(s, "<h2>blog (a.test)</h2>") {
		t.Errorf("the page does not head the origin with its name")
	}
	plain := report.Summarize(evs, nil, report.Options{})
	if s := text(t, plain); !strings.Contains(s, "\na.test\n  requests") {
		t.Errorf("without labels an origin is its host[:port]:\n%s", s)
	}
}

func TestAboutOpensThePageOnlyWhenGiven(t *testing.T) {
	evs := []events.Event{admitted(0, "http://a.test/p"), response(10, "http://a.test/p", 200, "miss", 10)}
	about := "The blog serves a sitemap index. The robots.txt of the archive answers 503."
	s := page(t, report.Summarize(evs, nil, report.Options{About: about}))
	if i, j := strings.Index(s, about), strings.Index(s, "<h2>"); i < 0 || i > j || !strings.Contains(s[:i], "<h1>") {
		t.Errorf("the sentences do not open the page, between the title and the first origin (at %d, origin at %d)", i, j)
	}
	if s := page(t, report.Summarize(evs, nil, report.Options{})); strings.Contains(s, `class="about"`) {
		t.Errorf("a page without About has an about paragraph")
	}
	if s := text(t, report.Summarize(evs, nil, report.Options{About: about})); strings.Contains(s, about) {
		t.Errorf("the text report prints About; it is the page's")
	}
}

func TestARefusalIsCountedOnce(t *testing.T) {
	evs := []events.Event{
		response(5, "http://a.test/robots.txt", 200, "miss", 40),
		blocked(100, robotsTxt, "/drafts/x"), blocked(200, robotsTxt, "/drafts/y"), blocked(300, "", "/z"),
		{Time: at(400), Type: events.Refused, URL: "http://a.test/w", Origin: "a.test", Reason: "budget", Detail: "given up"},
	}
	s := text(t, report.Summarize(evs, nil, report.Options{}))
	if !strings.Contains(s, "blocked 3 by") {
		t.Errorf("the robots.txt line does not count the 3 refusals:\n%s", s)
	}
	if regexp.MustCompile(`not sent .*robots`).MatchString(s) {
		t.Errorf("the robots.txt refusals are counted twice, on the robots.txt line and under not sent:\n%s", s)
	}
	if !strings.Contains(s, "not sent     budget 1\n") {
		t.Errorf("a refusal of another reason is not counted under not sent:\n%s", s)
	}
}

// TestTheBudgetLineShowsTheLoweredRate: a 429 halves the rate the door allows (hostclock's
// PenaltyFactor), and ten successes raise it by a quarter; the text and the legend say so.
func TestTheBudgetLineShowsTheLoweredRate(t *testing.T) {
	evs := []events.Event{admitted(0, "http://a.test/p"), retried(1000, "http://a.test/p", 429), paused(1000, "retry-after", 3000)}
	for i := range 10 {
		u := "http://a.test/" + string(rune('a'+i))
		evs = append(evs, admitted(3000+400*i, u), response(3010+400*i, u, 200, "miss", 10))
	}
	r := report.Summarize(evs, nil, report.Options{})
	o := r.Origins[0]
	if len(o.Lowered) != 2 || o.Lowered[0].Rate != 1.5 || o.Lowered[0].At != at(1000) || o.Lowered[1].Rate != 1.875 {
		t.Fatalf("Lowered = %+v; want 1.5/s at 1 s after the 429, then 1.875/s", o.Lowered)
	}
	if s := text(t, r); !strings.Contains(s, "budget       3/s; 1.5/s from 1.0 s (after a 429); 1.88/s from 6.6 s (recovering after 10 successes)\n") {
		t.Errorf("the text does not show the lowered budget:\n%s", s)
	}
	if s := page(t, r); !strings.Contains(s, "budget: 3 starts/s, lowered to 1.5/s after a 429") {
		t.Errorf("the legend does not name the lowered budget")
	}
	// A crawl that begins where an earlier one left the rate starts from there.
	r = report.Summarize(evs[3:], nil, report.Options{StartRates: map[string]float64{"a.test": 1.5}})
	if l := r.Origins[0].Lowered; len(l) != 2 || l[0].Rate != 1.5 || l[0].Reason != "after an earlier crawl's 429" || l[1].Rate != 1.875 {
		t.Errorf("Lowered from a start rate of 1.5 = %+v", l)
	}
	if l := report.Summarize(evs[3:], nil, report.Options{}).Origins[0].Lowered; l != nil {
		t.Errorf("Lowered without a 429 = %+v, want nil", l)
	}
}

func TestThePlotsUseThePagesTypeface(t *testing.T) {
	evs := []events.Event{admitted(0, "http://a.test/p"), response(10, "http://a.test/p", 200, "miss", 10)}
	s := page(t, report.Summarize(evs, nil, report.Options{}))
	if strings.Contains(s, "Liberation Serif") || !strings.Contains(s, "font-family:'Liberation Sans', Arial, Helvetica, sans-serif;") {
		t.Errorf("the plot's text is not in the page's sans-serif: %s", regexp.MustCompile(`font-family:[^;"]*`).FindString(s))
	}
	if !strings.Contains(s, "body { font: 15px/1.45 'Liberation Sans', Arial, Helvetica, sans-serif;") {
		t.Errorf("the page's font is not the plots'")
	}
}
