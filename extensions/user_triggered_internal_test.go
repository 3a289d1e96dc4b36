package extensions

import (
	"errors"
	"net/http"
	"testing"
)

// After the page's HEAD, the robots.txt GET that may come before the page's GET must be on the
// page's origin: it is part of fetching that page, not a request to a site nobody asked for.
func TestOnePageAdmitsRobotsTxtOfThePageOnlyBetweenHeadAndGet(t *testing.T) {
	var sent []string
	o := &onePage{next: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		sent = append(sent, req.Method+" "+req.URL.String())
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
	})}
	do := func(method, url string) error {
		req, _ := http.NewRequest(method, url, nil)
		_, err := o.RoundTrip(req)
		return err
	}
	if err := do(http.MethodHead, "http://a.example/page"); err != nil {
		t.Fatal(err)
	}
	if err := do(http.MethodGet, "http://b.example/robots.txt"); !errors.Is(err, ErrUserTriggeredFollow) {
		t.Errorf("robots.txt of another origin after the page's HEAD: %v, want ErrUserTriggeredFollow", err)
	}
	if err := do(http.MethodGet, "http://a.example/robots.txt"); err != nil {
		t.Errorf("robots.txt of the page's origin after its HEAD: %v", err)
	}
	if err := do(http.MethodGet, "http://a.example/page"); err != nil {
		t.Errorf("the page's GET after its HEAD: %v", err)
	}
	if len(sent) != 3 {
		t.Errorf("sent %q, want the HEAD, a.example's robots.txt and the GET", sent)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
