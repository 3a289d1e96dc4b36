package wprest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/discovery/discovered"
	"github.com/politecrawl/etiquette/politeness/kind"
)

// listing is how the fake WordPress answers one route.
type listing struct {
	entries    int    // entries in the listing
	status     int    // non-zero: answer every request with this status
	failPage   int    // answer this page with 500
	noTotal    bool   // omit X-WP-TotalPages
	totalPages int    // claim this many pages instead of the real number
	html       bool   // answer 200 with an HTML page
	body       string // answer 200 with this body
}

// wordpress is a fake site answering /wp-json/wp/v2/{posts,pages} and ?rest_route=/wp/v2/….
type wordpress struct {
	routes map[string]listing
	mu     sync.Mutex
	seen   []string // "route page" of each request
	bad    []string // what a request got wrong
}

func (wp *wordpress) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	route := strings.TrimPrefix(r.URL.Path, "/wp-json/")
	if rr := q.Get("rest_route"); rr != "" {
		route = strings.TrimPrefix(rr, "/")
	}
	page, _ := strconv.Atoi(q.Get("page"))
	wp.mu.Lock()
	wp.seen = append(wp.seen, fmt.Sprint(route, " ", page))
	if q.Get("per_page") != "100" || q.Get("_fields") != "link,modified_gmt" {
		wp.bad = append(wp.bad, "query "+r.URL.RawQuery)
	}
	wp.mu.Unlock()
	l, ok := wp.routes[route]
	switch {
	case !ok:
		http.NotFound(w, r)
		return
	case l.status != 0:
		w.WriteHeader(l.status)
		return
	case l.failPage == page:
		w.WriteHeader(http.StatusInternalServerError)
		return
	case l.html:
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		fmt.Fprint(w, "<!DOCTYPE html><html><body>Welcome</body></html>")
		return
	case l.body != "":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, l.body)
		return
	}
	pages := (l.entries + PerPage - 1) / PerPage
	if l.totalPages != 0 {
		pages = l.totalPages
	}
	if !l.noTotal {
		w.Header().Set("X-WP-TotalPages", strconv.Itoa(pages))
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	var items []string
	for i := (page - 1) * PerPage; i < min(page*PerPage, l.entries); i++ {
		items = append(items, fmt.Sprintf(`{"link":"http://%s/%s/%d/","modified_gmt":"2024-03-01T10:00:%02d"}`, r.Host, route, i, i%60))
	}
	fmt.Fprint(w, "["+strings.Join(items, ",")+"]")
}

// kinds records the kind of every request the client sends.
type kinds struct {
	mu  sync.Mutex
	got []kind.Kind
}

func (k *kinds) RoundTrip(req *http.Request) (*http.Response, error) {
	k.mu.Lock()
	k.got = append(k.got, kind.Of(req))
	k.mu.Unlock()
	return http.DefaultTransport.RoundTrip(req)
}

func TestList(t *testing.T) {
	cases := []struct {
		name     string
		routes   map[string]listing
		restForm bool
		opt      Options
		kept     int
		requests []string
		err      error
		check    func(t *testing.T, r Result)
	}{
		{"posts and pages, paged by X-WP-TotalPages",
			map[string]listing{"wp/v2/posts": {entries: 250}, "wp/v2/pages": {entries: 20}}, false, Options{},
			270, []string{"wp/v2/posts 1", "wp/v2/posts 2", "wp/v2/posts 3", "wp/v2/pages 1"}, nil,
			func(t *testing.T, r Result) {
				want := Listing{Route: "wp/v2/posts", Requests: 3, TotalPages: 3, Kept: 250}
				if r.Posts != want {
					t.Errorf("Posts = %+v, want %+v", r.Posts, want)
				}
			}},
		{"the ?rest_route= form of a site without pretty permalinks",
			map[string]listing{"wp/v2/posts": {entries: 120}, "wp/v2/pages": {entries: 1}}, true, Options{},
			121, []string{"wp/v2/posts 1", "wp/v2/posts 2", "wp/v2/pages 1"}, nil, nil},
		{"401 and 403 mean not offered, and nothing more is tried",
			map[string]listing{"wp/v2/posts": {status: 401}, "wp/v2/pages": {status: 403}}, false, Options{},
			0, []string{"wp/v2/posts 1", "wp/v2/pages 1"}, ErrNotOffered, nil},
		{"404 means not offered",
			map[string]listing{}, false, Options{},
			0, []string{"wp/v2/posts 1", "wp/v2/pages 1"}, ErrNotOffered, nil},
		{"posts offered, pages not",
			map[string]listing{"wp/v2/posts": {entries: 5}}, false, Options{},
			5, []string{"wp/v2/posts 1", "wp/v2/pages 1"}, ErrNotOffered,
			func(t *testing.T, r Result) {
				if r.Posts.Err != nil || !errors.Is(r.Pages.Err, ErrNotOffered) {
					t.Errorf("Posts.Err %v, Pages.Err %v", r.Posts.Err, r.Pages.Err)
				}
			}},
		{"HTML instead of JSON means not offered",
			map[string]listing{"wp/v2/posts": {html: true}, "wp/v2/pages": {html: true}}, false, Options{},
			0, []string{"wp/v2/posts 1", "wp/v2/pages 1"}, ErrNotOffered, nil},
		{"MaxPages caps the requests",
			map[string]listing{"wp/v2/posts": {entries: 300, totalPages: 500}, "wp/v2/pages": {entries: 0}}, false, Options{MaxPages: 2},
			200, []string{"wp/v2/posts 1", "wp/v2/posts 2", "wp/v2/pages 1"}, nil,
			func(t *testing.T, r Result) {
				if r.Posts.SkippedPages != 498 || r.Posts.TotalPages != 500 {
					t.Errorf("Posts = %+v, want 498 skipped of 500", r.Posts)
				}
			}},
		{"without X-WP-TotalPages, a short page is the last",
			map[string]listing{"wp/v2/posts": {entries: 200, noTotal: true}, "wp/v2/pages": {entries: 3, noTotal: true}}, false, Options{},
			203, []string{"wp/v2/posts 1", "wp/v2/posts 2", "wp/v2/posts 3", "wp/v2/pages 1"}, nil, nil},
		{"a 500 mid-listing keeps what came before",
			map[string]listing{"wp/v2/posts": {entries: 250, failPage: 2}, "wp/v2/pages": {entries: 1}}, false, Options{},
			101, []string{"wp/v2/posts 1", "wp/v2/posts 2", "wp/v2/pages 1"}, ErrUnavailable, nil},
		{"a broken list keeps the entries before the break",
			map[string]listing{"wp/v2/posts": {body: `[{"link":"/a/","modified_gmt":"2024-03-01T10:00:00"},{"link":`}, "wp/v2/pages": {body: `{"code":"x"}`}}, false, Options{},
			1, []string{"wp/v2/posts 1", "wp/v2/pages 1"}, ErrMalformed, nil},
		{"links obey the rule",
			map[string]listing{"wp/v2/posts": {body: `[{"link":"https://elsewhere.example/a/"},{"link":"ftp://x/"},{"link":"/b/#c","modified_gmt":"not a time"},{"link":null},{}]`},
				"wp/v2/pages": {entries: 0}}, false, Options{},
			1, []string{"wp/v2/posts 1", "wp/v2/pages 1"}, nil,
			func(t *testing.T, r Result) {
				want := discovered.Dropped{Invalid: 3, OffScope: 1}
				if r.Posts.Dropped != want || r.Posts.NoLastMod != 1 {
					t.Errorf("Posts = %+v, want Dropped %+v and NoLastMod 1", r.Posts, want)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wp := &wordpress{routes: c.routes}
			srv := httptest.NewServer(wp)
			defer srv.Close()
			root := srv.URL + "/wp-json/"
			if c.restForm {
				root = srv.URL + "/?rest_route=/"
			}
			k := &kinds{}
			var got []discovered.URL
			res, err := List(context.Background(), &http.Client{Transport: k}, root, c.opt, func(u discovered.URL) error {
				got = append(got, u)
				return nil
			})
			if !errors.Is(err, c.err) || (err != nil && c.err == nil) {
				t.Fatalf("List: %v, want %v", err, c.err)
			}
			if len(got) != c.kept || res.Posts.Kept+res.Pages.Kept != c.kept {
				t.Errorf("delivered %d, Kept %d+%d; want %d", len(got), res.Posts.Kept, res.Pages.Kept, c.kept)
			}
			if !reflect.DeepEqual(wp.seen, c.requests) {
				t.Errorf("requests %q, want %q", wp.seen, c.requests)
			}
			if len(wp.bad) > 0 {
				t.Errorf("requests without per_page=100 and _fields=link,modified_gmt: %q", wp.bad)
			}
			for _, kd := range k.got {
				if kd != kind.API {
					t.Errorf("a request went out as %q, not api", kd)
				}
			}
			for _, u := range got {
				p, _ := url.Parse(u.Loc)
				if p.Host != strings.TrimPrefix(srv.URL, "http://") || p.Fragment != "" || p.User != nil {
					t.Errorf("delivered %q", u.Loc)
				}
			}
			if c.check != nil {
				c.check(t, res)
			}
		})
	}
}

func TestModifiedIsUTC(t *testing.T) {
	wp := &wordpress{routes: map[string]listing{"wp/v2/posts": {entries: 1}, "wp/v2/pages": {}}}
	srv := httptest.NewServer(wp)
	defer srv.Close()
	var got []discovered.URL
	if _, err := List(context.Background(), srv.Client(), srv.URL+"/wp-json", Options{}, func(u discovered.URL) error {
		got = append(got, u)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []discovered.URL{{Loc: srv.URL + "/wp/v2/posts/0/", LastMod: time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestCallbackErrorStops(t *testing.T) {
	wp := &wordpress{routes: map[string]listing{"wp/v2/posts": {entries: 250}, "wp/v2/pages": {entries: 5}}}
	srv := httptest.NewServer(wp)
	defer srv.Close()
	stop := errors.New("enough")
	n := 0
	_, err := List(context.Background(), srv.Client(), srv.URL+"/wp-json/", Options{}, func(discovered.URL) error {
		if n++; n == 150 {
			return stop
		}
		return nil
	})
	if err != stop || n != 150 || len(wp.seen) != 2 {
		t.Errorf("err %v after %d entries and %d requests; want the callback's error after 150 and 2", err, n, len(wp.seen))
	}
}

func TestRootMustBeHTTP(t *testing.T) {
	if _, err := List(context.Background(), http.DefaultClient, "ftp://example.org/wp-json/", Options{}, nil); err == nil {
		t.Error("List accepted an ftp root")
	}
}
