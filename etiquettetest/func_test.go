package etiquettetest_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/etiquettetest"
)

func TestFuncChoosesTheAnswerForEachRequest(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	var mu sync.Mutex
	seen := 0
	// The third request of any path is refused: a count kept across paths, which Nth cannot do.
	o := site.NewOrigin().Otherwise(etiquettetest.Func(func(r *http.Request) etiquettetest.Answer {
		mu.Lock()
		defer mu.Unlock()
		seen++
		if seen == 3 {
			return etiquettetest.Status(503).RetryAfter(time.Second)
		}
		return etiquettetest.Text("page " + r.URL.Path).ETag(r.URL.Path[1:])
	}))
	var got []string
	for _, p := range []string{"/a", "/b", "/c", "/d"} {
		resp, body := get(t, http.MethodGet, o.URL+p)
		got = append(got, fmt.Sprintf("%d %s %s", resp.StatusCode, resp.Header.Get("Retry-After"), strings.TrimSpace(body)))
	}
	want := []string{"200  page /a", "200  page /b", "503 1 Service Unavailable", "200  page /d"}
	if !slices.Equal(got, want) {
		t.Errorf("answers %q, want %q", got, want)
	}
	// The chosen answer's validators work as they do anywhere else.
	if resp, _ := get(t, http.MethodGet, o.URL+"/e", "If-None-Match", `"e"`); resp.StatusCode != 304 {
		t.Errorf("conditional request to a Func answer's ETag: %d, want 304", resp.StatusCode)
	}
	reqs := o.Requests()
	if len(reqs) != 5 || reqs[2].Status != 503 || reqs[2].Answer.Get("Retry-After") != "1" {
		t.Errorf("recording %v; want 5 requests, the third answered 503 with Retry-After 1", etiquettetest.Paths(reqs))
	}
}

func TestFuncAnswerMayBeSlow(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin().Serve("/slow", etiquettetest.Func(func(*http.Request) etiquettetest.Answer {
		return etiquettetest.Text("late").Delay(50 * time.Millisecond)
	}))
	get(t, http.MethodGet, o.URL+"/slow")
	r := o.Requests()[0]
	if took := r.Done.Sub(r.At); took < 50*time.Millisecond {
		t.Errorf("the chosen answer's delay was not kept: answered after %v", took)
	}
}

func TestFuncMisuseIsAnswered500(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	nested := etiquettetest.Func(func(*http.Request) etiquettetest.Answer { return etiquettetest.Text("x") })
	o := site.NewOrigin().
		Serve("/nil", etiquettetest.Func(nil)).
		Serve("/nested", etiquettetest.Func(func(*http.Request) etiquettetest.Answer { return nested }))
	for path, want := range map[string]string{"/nil": "Func(nil)", "/nested": "another Func answer"} {
		resp, body := get(t, http.MethodGet, o.URL+path)
		if resp.StatusCode != 500 || !strings.Contains(body, want) {
			t.Errorf("%s: %d %q, want 500 saying %q", path, resp.StatusCode, body, want)
		}
	}
}

func TestContentTypeReplacesTheConstructors(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin().
		Serve("/page", etiquettetest.Text("<html>by hand</html>").ContentType("text/html")).
		Serve("/file.gz", etiquettetest.Text("x").ContentType("text/html").Gzipped())
	for path, want := range map[string]string{"/page": "text/html", "/file.gz": "application/gzip"} {
		if resp, _ := get(t, http.MethodGet, o.URL+path); resp.Header.Get("Content-Type") != want {
			t.Errorf("%s: Content-Type %q, want %q", path, resp.Header.Get("Content-Type"), want)
		}
	}
}

func TestRecordingCountsTheBodyBytesSent(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin().
		Serve("/page", etiquettetest.Text("0123456789").ETag("p1")).
		Serve("/gone", etiquettetest.Status(http.StatusGone)).
		Serve("/hang", etiquettetest.Text("never").HoldUntil(nil))
	get(t, http.MethodGet, o.URL+"/page")
	get(t, http.MethodGet, o.URL+"/page", "If-None-Match", `"p1"`)
	get(t, http.MethodHead, o.URL+"/page")
	get(t, http.MethodGet, o.URL+"/gone")
	client := &http.Client{Timeout: 50 * time.Millisecond}
	if _, err := client.Get(o.URL + "/hang"); err == nil {
		t.Fatal("the hanging answer was answered")
	}
	site.Close() // waits for the hang's handler, so its request is final
	var got []int64
	for _, r := range o.Requests() {
		got = append(got, r.BodyBytes)
	}
	// A full answer, a 304, a HEAD, a 410 with its reason as the body, a hang.
	if want := []int64{10, 0, 0, int64(len("Gone\n")), 0}; !slices.Equal(got, want) {
		t.Errorf("body bytes %v, want %v", got, want)
	}
}
