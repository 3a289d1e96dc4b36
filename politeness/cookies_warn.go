package politeness

// This file decides when a refused cookie is worth a warning, and what the warning says.

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/politecrawl/etiquette/cookies"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// cookieTrail remembers, per origin, the cookies the door refused that a Policy field could keep,
// and whether the origin was warned about already. A refused session cookie followed by a
// redirect is how a failed login or session looks from the door, and a Cookie header the door
// did not send is the scraper's intent lost; each is one Warn per origin, not one per request.
type cookieTrail struct {
	sink events.Sink

	mu      sync.Mutex
	origins map[string]*originTrail // by origin.RobotsKey
}

type originTrail struct {
	refused        []cookies.Refusal // keepable refusals, distinct names, at most maxNamedCookies
	warnedRedirect bool              // the lost session was said (a redirect or a form's answer)
	warnedHeader   bool
}

// maxNamedCookies bounds the cookies one warning names; maxTrailOrigins the origins remembered
// (past it the memory starts afresh, so an origin may be warned about once more, never less).
const (
	maxNamedCookies = 4
	maxTrailOrigins = 4096
)

func newCookieTrail(sink events.Sink) *cookieTrail {
	return &cookieTrail{sink: sink, origins: map[string]*originTrail{}}
}

// at returns the origin's trail, creating it. Requires t.mu.
func (t *cookieTrail) at(key string) *originTrail {
	o := t.origins[key]
	if o == nil {
		if len(t.origins) >= maxTrailOrigins {
			clear(t.origins)
		}
		o = &originTrail{}
		t.origins[key] = o
	}
	return o
}

// refused remembers the refusals of a response from u that a Policy field could have prevented:
// a category a purpose can keep (not a tracker, consent, anti-bot or paywall cookie, and not an
// attribute problem such as a foreign Domain).
func (t *cookieTrail) refused(u *url.URL, rs []cookies.Refusal) {
	key, err := origin.RobotsKey(u)
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range rs {
		if r.Reason != r.Match.Category.String() || r.Match.Category.NeverKept() {
			continue
		}
		o := t.at(key)
		if o.warnedRedirect || len(o.refused) >= maxNamedCookies ||
			slices.ContainsFunc(o.refused, func(x cookies.Refusal) bool { return x.Name == r.Name }) {
			continue
		}
		o.refused = append(o.refused, r)
	}
}

// redirected warns, once per origin, when a request to u was redirected after the door had
// refused a keepable cookie of u's origin.
func (t *cookieTrail) redirected(u *url.URL) {
	t.needed(u, "was redirected after the door refused cookies of")
}

// formAnswered warns, once per origin, when the answer to a form (a request other than GET or
// HEAD: a login, a search, a cart) to u set keepable cookies the door refused: a site that answers
// a login in place, without a redirect, loses its session as surely.
func (t *cookieTrail) formAnswered(u *url.URL, method string) {
	t.needed(u, "("+method+", a form's answer) set cookies the door refused, of")
}

// needed emits the warning of redirected and formAnswered: what happened to u, then the refused
// cookies of its origin with the Policy field that keeps each.
func (t *cookieTrail) needed(u *url.URL, what string) {
	key, err := origin.RobotsKey(u)
	if err != nil {
		return
	}
	t.mu.Lock()
	o := t.origins[key]
	if o == nil || o.warnedRedirect || len(o.refused) == 0 {
		t.mu.Unlock()
		return
	}
	o.warnedRedirect = true
	names := make([]string, len(o.refused))
	for i, r := range o.refused {
		names[i] = r.Name + " (" + r.Match.Category.String() + "; " + keepHint(key, r.Match.Category, r.Name) + ")"
	}
	o.refused = nil
	t.mu.Unlock()
	budget, _ := origin.BudgetKey(u)
	t.sink.Emit(events.Event{Type: events.Notice, URL: u.String(), Origin: budget, Reason: cookieNeeded, Detail: fmt.Sprintf(
		"%s %s %s: %s. A form or redirect after a refused cookie is how a login or session that cannot hold looks; if the task needs the cookie, declare it in Policy.Cookies",
		u.Redacted(), what, key, strings.Join(names, ", "))})
}

// headerDropped warns, once per origin, that cookies of a Cookie header the caller set were not
// sent.
func (t *cookieTrail) headerDropped(u *url.URL, names []string) {
	key, err := origin.RobotsKey(u)
	if err != nil {
		return
	}
	t.mu.Lock()
	o := t.at(key)
	if o.warnedHeader {
		t.mu.Unlock()
		return
	}
	o.warnedHeader = true
	t.mu.Unlock()
	described := make([]string, len(names))
	for i, n := range names {
		cat := cookies.Classify(n)
		described[i] = n + " (" + cat.String() + "; " + keepHint(key, cat, n) + ")"
	}
	budget, _ := origin.BudgetKey(u)
	t.sink.Emit(events.Event{Type: events.Notice, URL: u.String(), Origin: budget, Reason: cookieHeaderDropped, Detail: fmt.Sprintf(
		"cookies of the Cookie header set for %s (by a callback, colly.Headers or the collector's cookie jar) were not sent: %s. The door sends only the cookies a Policy.Cookies purpose keeps for the origin",
		key, strings.Join(described, ", "))})
}

// keepHint names the Policy field that keeps a cookie of category cat named name on the origin
// key, or says that none does.
func keepHint(key string, cat cookies.Category, name string) string {
	switch {
	case cat.NeverKept():
		return "never kept, whatever the Policy says"
	case cat == cookies.Login:
		return fmt.Sprintf("keep it with Policy.Cookies.Login: []string{%q} if the crawler signs in there with credentials it was given", key)
	case cat == cookies.Session:
		return fmt.Sprintf("keep it with Policy.Cookies.Login: []string{%q} for a site the crawler signs in to, or Policy.Cookies.Categories: cookies.Session", key)
	case cat.Declarable():
		return "keep it with Policy.Cookies.Categories: cookies." + declarableName(cat)
	}
	return fmt.Sprintf("keep it with Policy.Cookies.Allow: []string{%q}", name)
}

// declarableName is a declarable category's Go constant name.
func declarableName(c cookies.Category) string {
	switch c {
	case cookies.LoadBalancer:
		return "LoadBalancer"
	case cookies.CSRF:
		return "CSRF"
	}
	return "Session"
}
