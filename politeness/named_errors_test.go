package politeness

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A redirect to file: or javascript: is refused in words that say so. Before, the robots gate
// answered "robots.txt cannot apply to this URL".
func TestARedirectToANonHTTPSchemeIsNamed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			w.WriteHeader(http.StatusNotFound)
		case "/file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		default:
			http.Redirect(w, r, "javascript:alert(1)", http.StatusFound)
		}
	}))
	defer srv.Close()
	d := testDoor(t, srv, nil)
	for _, path := range []string{"/file", "/js"} {
		_, err := d.Client().Get(srv.URL + path)
		if !errors.Is(err, ErrNonHTTPRedirect) || !strings.Contains(err.Error(), "redirect to a non-HTTP scheme refused") ||
			!strings.Contains(err.Error(), srv.URL+path) {
			t.Errorf("%s: %v; want ErrNonHTTPRedirect naming the page that redirected", path, err)
		}
	}
}

// The door's exchange timeout names itself and Policy.Timeout, for the answer and for its body.
// Before, both said only "context deadline exceeded".
func TestTheExchangeTimeoutIsNamed(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			w.WriteHeader(http.StatusNotFound)
			return
		case "/slow-body":
			io.WriteString(w, "start")
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	d := testDoor(t, srv, func(p *Policy) { p.Timeout = 300 * time.Millisecond })

	_, err := d.Client().Get(srv.URL + "/slow-answer")
	var te *TimeoutError
	var ne net.Error
	if !errors.As(err, &te) || te.Limit != 300*time.Millisecond || !errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(err.Error(), "Policy.Timeout") || !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("a slow answer: %v; want a *TimeoutError naming Policy.Timeout", err)
	}

	resp, err := d.Client().Get(srv.URL + "/slow-body")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "exchange timeout of 300ms") {
		t.Errorf("a slow body: %v; want a *TimeoutError", err)
	}

	// The caller's own deadline is the caller's: not named as the door's.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/slow-answer", nil)
	if _, err := d.Client().Do(req); errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the caller's deadline: %v; want it as the caller's", err)
	}
}
