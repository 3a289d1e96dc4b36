package robots

// This file decides which groups of a robots.txt speak to a requester: RFC 9309's selection for
// a crawler, and the narrower reading for a fetch one person asked for.

import (
	"net/url"
	"time"
)

// Reading says which groups of a robots.txt decide the requests sent with one product token.
// The zero value reads nothing and is not usable; build one with [ForCrawler] or
// [ForUserTriggered].
//
// RFC 9309 governs crawlers. A fetch made because one person asked for one page right now is a
// different act: an operator who wrote "User-agent: *" / "Disallow: /", or a group for the crawl
// token, decided about crawling. So a user-triggered fetch is, by default, decided only by a
// group that names its own token; a group naming that token is respected without exception.
type Reading struct {
	// Token is the product token the requests carry. Its Crawl-delay (chosen as RFC 9309 chooses
	// groups: its own group, else "*") paces the requests in every reading, because the pace is
	// about the server's load, not about whether the page may be read.
	Token string
	// OwnGroupOnly makes only groups that name Token decide: without one, every URL is allowed
	// (the "*" group does not apply). Without OwnGroupOnly, RFC 9309 §2.2.1 selects the group.
	OwnGroupOnly bool
	// AlsoObey lists further product tokens whose groups, selected as RFC 9309 selects them (own
	// group, else "*"), must allow the URL too.
	AlsoObey []string
}

// ForCrawler is the reading of RFC 9309 for a crawler whose requests carry token.
func ForCrawler(token string) Reading { return Reading{Token: token} }

// ForUserTriggered is the reading for a fetch one person asked for, sent with userToken by the
// crawler whose crawl token is crawlToken. By default only a group naming userToken decides;
// strict adds RFC 9309's selection for userToken (its group, else "*") and for crawlToken (its
// group, else "*"): the fetch is blocked when any of them disallows it — the most cautious reading.
func ForUserTriggered(userToken, crawlToken string, strict bool) Reading {
	if !strict {
		return Reading{Token: userToken, OwnGroupOnly: true}
	}
	return Reading{Token: userToken, AlsoObey: []string{crawlToken}}
}

// Decide reports whether r's requester may fetch u under e, and the product token whose group
// decided: the first token whose reading disallows u, else Token. A robots.txt that could not be
// read (unreachable, 5xx, 429, never fetched) disallows in every reading, as RFC 9309 §2.3.1.4
// asks: whether a group names the token cannot be known then. /robots.txt itself is always allowed.
func (r Reading) Decide(e *Entry, u *url.URL) (Decision, string) {
	var d Decision
	if r.OwnGroupOnly {
		d = e.decideNamed(r.Token, u)
	} else {
		d = e.Decide(r.Token, u)
	}
	if !d.Allowed {
		return d, r.Token
	}
	for _, t := range r.AlsoObey {
		if also := e.Decide(t, u); !also.Allowed {
			return also, t
		}
	}
	return d, r.Token
}

// CrawlDelay returns the Crawl-delay that paces r's requests under e (see Reading.Token).
func (r Reading) CrawlDelay(e *Entry) (time.Duration, bool) { return e.CrawlDelay(r.Token) }

// decideNamed is Entry.Decide by the groups naming token alone: a parsed robots.txt without such
// a group allows u.
func (e *Entry) decideNamed(token string, u *url.URL) Decision {
	if e == nil || e.File == nil {
		return e.Decide(token, u) // /robots.txt, not fetched, unavailable (allow) or unreachable (disallow)
	}
	if d, ok := robotsTxtItself(u); ok {
		return d
	}
	groups, name := e.File.groupsNaming(token)
	if groups == nil {
		return Decision{Allowed: true, Reason: "no group names " + quoteToken(token) +
			": a fetch one person asked for is decided only by a group naming its own token, not by * or the crawl token's group"}
	}
	return e.noteStale(e.File.decideIn(groups, name, u))
}
