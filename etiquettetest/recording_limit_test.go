package etiquettetest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// reports is a TB that keeps what was reported.
type reports struct{ lines []string }

func (r *reports) Helper() {}
func (r *reports) Errorf(format string, args ...any) {
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

func TestRecordingStopsAtItsLimitAndCountsTheRest(t *testing.T) {
	site := NewSite()
	defer site.Close()
	site.limit = 2
	o := site.NewOrigin().Otherwise(Text("ok"))
	for range 3 {
		resp, err := http.Get(o.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("an unrecorded request was answered %d", resp.StatusCode)
		}
	}
	if got, dropped := len(site.Requests()), site.Unrecorded(); got != 2 || dropped != 1 {
		t.Errorf("recorded %d, unrecorded %d; want 2 and 1", got, dropped)
	}
}

func TestSiteCheckJudgesTheWholeRecordingUnlessItOverflowed(t *testing.T) {
	site := NewSite()
	defer site.Close()
	o := site.NewOrigin().Otherwise(Text("ok"))
	req, err := http.NewRequest(http.MethodGet, o.URL+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Cookie", "a=1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	var r reports
	if !site.Check(&r, NeverRequest("/private")) || len(r.lines) != 0 {
		t.Errorf("a kept rule was reported: %q", r.lines)
	}
	if site.Check(&r, SendNoCookies(), NeverRequest("/")) || len(r.lines) != 2 || !strings.Contains(r.lines[0], `Cookie "a=1"`) {
		t.Errorf("two broken rules: reports %q, want two, the first quoting the cookie", r.lines)
	}

	site.limit = 1
	more, err := http.Get(o.URL + "/more")
	if err != nil {
		t.Fatal(err)
	}
	more.Body.Close()
	r = reports{}
	if site.Check(&r, NeverRequest("/private")) || len(r.lines) != 1 || !strings.Contains(r.lines[0], "beyond the") {
		t.Errorf("a site that stopped recording: reports %q, want one saying so", r.lines)
	}
}
