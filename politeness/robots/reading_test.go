package robots

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// parsedEntry is an entry whose robots.txt was fetched and parsed from body.
func parsedEntry(body string) *Entry {
	return &Entry{Outcome: Parsed, Status: 200, File: Parse([]byte(body))}
}

// A user-triggered fetch is decided, by default, only by a group naming its own token; strict
// adds RFC 9309's selection for the user token and for the crawl token. A crawler reads RFC 9309.
func TestReadingDecidesByWhoseRequestItIs(t *testing.T) {
	const user, crawl = "ExampleBot-User", "ExampleBot"
	page, _ := url.Parse("https://site.example/page")
	cases := []struct {
		name, robots string
		reading      Reading
		allowed      bool
		decidedBy    string // the token whose group decided a refusal
		rule         string
	}{
		{"crawl group, user default", "User-agent: ExampleBot\nDisallow: /\n", ForUserTriggered(user, crawl, false), true, "", ""},
		{"crawl group, user strict", "User-agent: ExampleBot\nDisallow: /\n", ForUserTriggered(user, crawl, true), false, crawl, "Disallow: /"},
		{"crawl group, crawler", "User-agent: ExampleBot\nDisallow: /\n", ForCrawler(crawl), false, crawl, "Disallow: /"},
		{"star, user default", "User-agent: *\nDisallow: /\n", ForUserTriggered(user, crawl, false), true, "", ""},
		{"star, user strict", "User-agent: *\nDisallow: /\n", ForUserTriggered(user, crawl, true), false, user, "Disallow: /"},
		{"user group, user default", "User-agent: ExampleBot-User\nDisallow: /\n", ForUserTriggered(user, crawl, false), false, user, "Disallow: /"},
		{"user group, user strict", "User-agent: ExampleBot-User\nDisallow: /\n", ForUserTriggered(user, crawl, true), false, user, "Disallow: /"},
		{"user group case-folded", "User-agent: examplebot-user\nDisallow: /page\n", ForUserTriggered(user, crawl, false), false, user, "Disallow: /page"},
		{"user group allows, star forbids, default", "User-agent: *\nDisallow: /\n\nUser-agent: ExampleBot-User\nAllow: /\n", ForUserTriggered(user, crawl, false), true, "", ""},
		{"user group allows, star forbids, strict", "User-agent: *\nDisallow: /\n\nUser-agent: ExampleBot-User\nAllow: /\n", ForUserTriggered(user, crawl, true), false, crawl, "Disallow: /"},
		{"a prefix is not the token", "User-agent: ExampleBot-Us\nDisallow: /\n", ForUserTriggered(user, crawl, false), true, "", ""},
		{"nothing restricts", "User-agent: Other\nDisallow: /\n", ForUserTriggered(user, crawl, true), true, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, by := c.reading.Decide(parsedEntry(c.robots), page)
			if d.Allowed != c.allowed {
				t.Fatalf("Allowed = %v (%s), want %v", d.Allowed, d.Reason, c.allowed)
			}
			if !c.allowed && (by != c.decidedBy || d.Rule != c.rule) {
				t.Errorf("decided by %q with %q, want %q with %q", by, d.Rule, c.decidedBy, c.rule)
			}
			if d.Reason == "" {
				t.Error("the decision carries no reason")
			}
		})
	}
}

// Whether a group names the user token cannot be known while robots.txt is unreadable, so every
// reading disallows then; a 4xx (no robots.txt) allows in every reading; /robots.txt is always allowed.
func TestReadingKeepsTheOutcomeRules(t *testing.T) {
	page, _ := url.Parse("https://site.example/page")
	robotsURL, _ := url.Parse("https://site.example/robots.txt")
	readings := map[string]Reading{"crawler": ForCrawler("ExampleBot"),
		"user": ForUserTriggered("ExampleBot-User", "ExampleBot", false), "strict": ForUserTriggered("ExampleBot-User", "ExampleBot", true)}
	for name, r := range readings {
		if d, _ := r.Decide(&Entry{Outcome: Unreachable, Status: 503}, page); d.Allowed || d.Cause != "answered 503" {
			t.Errorf("%s: unreachable robots.txt gave %+v, want disallowed with its cause", name, d)
		}
		if d, _ := r.Decide(nil, page); d.Allowed {
			t.Errorf("%s: a robots.txt never fetched allowed the page", name)
		}
		if d, _ := r.Decide(&Entry{Outcome: Unavailable, Status: 404}, page); !d.Allowed {
			t.Errorf("%s: a 404 robots.txt disallowed the page", name)
		}
		if d, _ := r.Decide(&Entry{Outcome: Unreachable}, robotsURL); !d.Allowed {
			t.Errorf("%s: /robots.txt itself was disallowed", name)
		}
	}
}

// A stale copy decides the user-triggered reading too, and says so.
func TestReadingNamesTheStaleCopy(t *testing.T) {
	page, _ := url.Parse("https://site.example/page")
	e := parsedEntry("User-agent: ExampleBot-User\nDisallow: /\n")
	e.Stale, e.Status, e.Good = true, 503, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	d, _ := ForUserTriggered("ExampleBot-User", "ExampleBot", false).Decide(e, page)
	if d.Allowed || !strings.Contains(d.Reason, "copy fetched at 2026-03-01 12:00:00 UTC") {
		t.Errorf("stale copy: %+v, want disallowed, naming the copy", d)
	}
}

// The pace of a user-triggered fetch is its own token's Crawl-delay as RFC 9309 selects it:
// the * group's when no group names the token.
func TestReadingCrawlDelayFollowsRFCSelection(t *testing.T) {
	e := parsedEntry("User-agent: *\nCrawl-delay: 4\nDisallow: /\n")
	if d, ok := ForUserTriggered("ExampleBot-User", "ExampleBot", false).CrawlDelay(e); !ok || d != 4*time.Second {
		t.Errorf("CrawlDelay = %v, %v; want 4s from the * group", d, ok)
	}
}
