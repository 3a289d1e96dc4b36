package report_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/report"
)

// crawlEvents is a small crawl of two origins with every kind of mark the timeline draws.
func crawlEvents() []events.Event {
	evs := []events.Event{
		response(0, "http://a.test/robots.txt", 200, "miss", 40),
		admitted(10, "http://a.test/p"), retried(60, "http://a.test/p", 429), paused(60, "retry-after", 2060),
		admitted(100, "http://a.test/q"), waited(2100, "http://a.test/q", "retry-after", 2000), response(2110, "http://a.test/q", 200, "miss", 10),
		waited(2400, "http://a.test/p", "rate", 2340), response(2410, "http://a.test/p", 200, "revalidated", 10),
		admitted(2500, "http://a.test/f"), response(2501, "http://a.test/f", 200, "fresh", 10),
		blocked(2600, robotsTxt, "/drafts/<script>"), cookie(2700, "analytics: _ga"),
		{Time: at(3000), Type: events.Response, URL: "http://b.test:8080/robots.txt", Origin: "b.test:8080", Kind: kind.Robots, Status: 503},
	}
	for i := range 9 {
		u := "http://a.test/n" + string(rune('0'+i))
		evs = append(evs, admitted(3000+i*334, u), response(3000+i*334+5, u, 200, "miss", 100))
	}
	return evs
}

func TestWriteDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report", "nested")
	var found report.Found
	found.Add("http://a.test/p", "link")
	evs := crawlEvents()
	rep, err := writeDir(dir, evs, &found, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Origins) != 2 {
		t.Fatalf("origins %d, want 2", len(rep.Origins))
	}

	raw, err := os.ReadFile(filepath.Join(dir, report.EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	back, err := readJSONL(bytes.NewReader(raw))
	if err != nil || len(back) != len(evs) {
		t.Fatalf("events.jsonl: %d events, %v; want %d", len(back), err, len(evs))
	}
	for i := range evs {
		if !sameEvent(back[i], evs[i]) {
			t.Errorf("events.jsonl event %d:\n got %+v\nwant %+v", i, back[i], evs[i])
		}
	}

	page, err := os.ReadFile(filepath.Join(dir, report.HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatalf("index.html does not parse: %v", err)
	}
	svgs, figures := 0, 0
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch n.Data {
		case "svg":
			svgs++
		case "figure":
			figures++
		case "script", "iframe", "img", "object", "embed":
			t.Errorf("index.html has a <%s>; it must be self-contained and script-free", n.Data)
		}
		for _, a := range n.Attr {
			if (a.Key == "src" || a.Key == "href" || a.Key == "xlink:href") && strings.Contains(a.Val, "//") {
				t.Errorf("index.html fetches or links %q; it must be self-contained", a.Val)
			}
		}
	}
	if svgs != 2 || figures != 2 {
		t.Errorf("%d <svg> in %d <figure>, want one timeline per origin", svgs, figures)
	}
	text := string(page)
	for _, s := range []string{"a.test", "b.test:8080", "answered 503", "budget: 3 starts/s", "pause: Retry-After",
		"start: answered 429/5xx or failed (re-sent or given up)", "from the cache, no request", "wait: the rate budget", `href="events.jsonl"`} {
		if !strings.Contains(text, s) {
			t.Errorf("index.html lacks %q", s)
		}
	}
	if strings.Contains(text, "<script>") {
		t.Error("a URL of the crawl reached the page unescaped")
	}
}

func TestCreateStreamsEventsAsTheCrawlRuns(t *testing.T) {
	dir := t.TempDir()
	d, err := report.Create(dir, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var bus events.Bus
	cancel := bus.Subscribe(d.Record)
	evs := crawlEvents()
	for _, e := range evs {
		bus.Emit(e)
	}
	cancel()
	rep, err := d.Close(nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Events != len(evs) {
		t.Errorf("report of %d events, want %d", rep.Events, len(evs))
	}
	f, err := os.Open(filepath.Join(dir, report.EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	back, err := readJSONL(f)
	if err != nil || len(back) != len(evs) {
		t.Errorf("events.jsonl: %d events, %v; want %d", len(back), err, len(evs))
	}
}

func TestCreateInAnUnwritablePlace(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := report.Create(filepath.Join(file, "dir"), report.Options{}); err == nil {
		t.Error("Create under a file succeeded")
	}
}

func TestTimelineOfAnOverBudgetOrigin(t *testing.T) {
	var evs []events.Event
	for i := range 5 {
		u := "http://a.test/" + string(rune('a'+i))
		evs = append(evs, admitted(i*100, u), response(i*100+5, u, 200, "miss", 1))
	}
	var b bytes.Buffer
	if err := report.Summarize(evs, nil, report.Options{}).WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "More starts in one second than the budget allows") {
		t.Error("the page does not say the budget was broken")
	}
}
