package robots_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/politecrawl/etiquette/politeness/robots"
)

func ExampleFile_Decide() {
	f := robots.Parse([]byte("User-agent: *\nDisallow: /private\n\nUser-agent: ExampleBot\nDisallow: /drafts/\nAllow: /drafts/public/\n"))
	for _, path := range []string{"/private/x", "/drafts/a", "/drafts/public/b"} {
		u, _ := url.Parse("https://example.org" + path)
		d := f.Decide("ExampleBot", u)
		fmt.Printf("%s allowed=%v line=%d %q\n", path, d.Allowed, d.Line, d.Rule)
	}
	// Output:
	// /private/x allowed=true line=0 ""
	// /drafts/a allowed=false line=5 "Disallow: /drafts/"
	// /drafts/public/b allowed=true line=6 "Allow: /drafts/public/"
}

func ExampleKeeper_Lookup() {
	k := robots.NewKeeper(robots.Options{})
	// A Fetch normally sends the request through the door; this one answers 503.
	fetch := func(ctx context.Context, robotsURL string) (*http.Response, error) {
		return &http.Response{StatusCode: 503, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(""))}, nil
	}
	u, _ := url.Parse("https://example.org/page")
	e, err := k.Lookup(context.Background(), u, fetch)
	if err != nil {
		fmt.Println(err)
		return
	}
	d := e.Decide("ExampleBot", u)
	fmt.Println(e.Outcome, d.Allowed)
	// Output:
	// unreachable false
}
