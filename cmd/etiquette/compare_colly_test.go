package main

import (
	"net/url"
	"testing"
)

// TestCollyDecide pins what Colly's built-in check decides where it departs from RFC 9309, so
// that --compare-colly reports Colly's real answer.
func TestCollyDecide(t *testing.T) {
	cases := []struct {
		name, body, ua, url string
		allowed             bool
		parseErr            bool
	}{
		{"equal-length tie: the first rule wins (RFC 9309: allow)", "User-agent: *\nDisallow: /page\nAllow: /page\n", "ExampleBot", "https://example.org/page", false, false},
		{"the group is found by a prefix of the whole User-Agent", "User-agent: examplebot\nDisallow: /\n", "ExampleBot/1.0 (+https://example.org/bot)", "https://example.org/x", false, false},
		{"a token inside the User-Agent is not found", "User-agent: examplebot\nDisallow: /\n", "Mozilla/5.0 (compatible; ExampleBot/1.0)", "https://example.org/x", true, false},
		{"no matching group allows", "User-agent: OtherBot\nDisallow: /\n", "ExampleBot", "https://example.org/x", true, false},
		{"the query is re-encoded, its keys sorted, before matching", "User-agent: *\nDisallow: /s?b=2\n", "ExampleBot", "https://example.org/s?b=2&a=1", true, false},
		{"a rule before any User-agent is a parse error", "Disallow: /\n", "ExampleBot", "https://example.org/", false, true},
		{"an invalid Crawl-delay is a parse error", "User-agent: *\nCrawl-delay: soon\n", "ExampleBot", "https://example.org/", false, true},
	}
	for _, tc := range cases {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		allowed, err := collyDecide([]byte(tc.body), tc.ua, u)
		if allowed != tc.allowed || (err != nil) != tc.parseErr {
			t.Errorf("%s: collyDecide = %v, %v; want %v, parse error %v", tc.name, allowed, err, tc.allowed, tc.parseErr)
		}
	}
}
