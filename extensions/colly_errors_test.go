package extensions_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// onError visits u with c and returns what OnError saw (nil response and error when it was not
// called).
func onError(t *testing.T, c *colly.Collector, u string) (*colly.Response, error) {
	t.Helper()
	var resp *colly.Response
	var got error
	c.OnError(func(r *colly.Response, err error) { resp, got = r, err })
	_ = c.Visit(u)
	c.OnError(func(*colly.Response, error) {})
	return resp, got
}

// A URL robots.txt disallows is refused as Colly refuses it — errors.Is(err,
// colly.ErrRobotsTxtBlocked) — and as the door does (robots.ErrDisallowed, with the deciding rule).
func TestRobotsRefusalIsCollysErrRobotsTxtBlocked(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin().Robots("User-agent: *\nDisallow: /private\n")
	c := colly.NewCollector()
	if err := extensions.Polite(c, fastPolicyAt(t, o.Addr(), nil)); err != nil {
		t.Fatal(err)
	}
	_, err := onError(t, c, o.URL+"/private/page")
	var d *robots.DisallowedError
	if !errors.Is(err, colly.ErrRobotsTxtBlocked) || !errors.Is(err, robots.ErrDisallowed) || !errors.As(err, &d) {
		t.Fatalf("OnError got %v, want colly.ErrRobotsTxtBlocked and a *robots.DisallowedError", err)
	}
	if d.Decision.Reason == "" {
		t.Errorf("the refusal does not name the deciding rule: %v", err)
	}
}

// An origin the door gave up after a 429 (its Retry-After beyond the 24 h ceiling): the 429
// reaches OnError as Colly delivers it (r.StatusCode 429), and every later request to the origin
// fails with errors.Is(err, extensions.ErrOriginGivenUp).
func TestGiveUpAfter429IsErrOriginGivenUp(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin().Serve("/busy", etiquettetest.Status(http.StatusTooManyRequests).RetryAfter(25*time.Hour)).
		Serve("/later", etiquettetest.Text("never"))
	c := colly.NewCollector()
	if err := extensions.Polite(c, fastPolicyAt(t, o.Addr(), nil)); err != nil {
		t.Fatal(err)
	}
	if r, err := onError(t, c, o.URL+"/busy"); r == nil || r.StatusCode != http.StatusTooManyRequests || err == nil {
		t.Fatalf("OnError for the 429 got %v, want the 429 response as Colly delivers it", err)
	}
	_, err := onError(t, c, o.URL+"/later")
	var gu *hostclock.GiveUpError
	if !errors.Is(err, extensions.ErrOriginGivenUp) || !errors.As(err, &gu) {
		t.Fatalf("OnError after the give-up got %v, want extensions.ErrOriginGivenUp and a *hostclock.GiveUpError", err)
	}
	for _, r := range o.Requests() {
		if r.Path() == "/later" {
			t.Error("a request reached the origin after it was given up")
		}
	}
}

// A setter that replaces the door after Polite: the request never leaves, and OnError's error is
// extensions.ErrDoorBypassed (and context.Canceled).
func TestDoorBypassIsErrDoorBypassed(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin().Serve("/page", etiquettetest.Text("page"))
	c := colly.NewCollector()
	if err := extensions.Polite(c, fastPolicyAt(t, o.Addr(), nil)); err != nil {
		t.Fatal(err)
	}
	if err := c.SetProxy("http://127.0.0.1:1"); err != nil {
		t.Fatal(err)
	}
	_, err := onError(t, c, o.URL+"/page")
	if !errors.Is(err, extensions.ErrDoorBypassed) || !errors.Is(err, context.Canceled) {
		t.Fatalf("OnError got %v, want extensions.ErrDoorBypassed and context.Canceled", err)
	}
	if len(o.Requests()) != 0 {
		t.Errorf("the origin received %d requests after the door was bypassed", len(o.Requests()))
	}
}
