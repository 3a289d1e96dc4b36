package cookies

// This file decides what a task may declare it needs: which categories and which further names.

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/politecrawl/etiquette/politeness/origin"
)

// Purpose declares which cookies a task technically needs. The zero value needs none: a jar with
// it keeps nothing (every cookie is refused and counted).
//
// A crawler that signs in to a site with credentials its operator was given names the site's
// origin in Login:
//
//	cookies.Purpose{Login: []string{"https://members.example.org"}}
//
// Tracking, consent, anti-bot and paywall cookies stay refused whatever the purpose says.
type Purpose struct {
	// Categories the task needs kept: only the declarable ones, [Session], [LoadBalancer] and
	// [CSRF] (see [Category.Declarable]). [ParseCategories] reads them from "session,csrf".
	Categories []Category
	// Allow lists further cookie names to keep: exact names, or a prefix ending in "*"
	// ("myapp_*"). Names are case-sensitive (RFC 6265 §5.3). An allowed name is still refused when
	// its category is never kept (analytics, marketing, personalization, consent, anti-bot,
	// paywall) or is login (kept only for the origins of Login), when it comes with a Domain of
	// another site, when it is Partitioned, and, if the classifier does not know it, when it is
	// SameSite=None.
	Allow []string
	// Login names the origins ("https://members.example.org": scheme, host and port, no path)
	// the crawler signs in to with credentials its operator was given — authentication, the way
	// a site verifies who a crawler is, not a way around its access protection. For these
	// origins only, the jar keeps what a signed-in session technically needs: login, session,
	// CSRF and load-balancer cookies. They stay in memory, go back to the origin that set them
	// and to no other (not to another host, scheme or port), and end with the jar. A login
	// cookie (wordpress_logged_in_*, next-auth.session-token, …) is kept nowhere else.
	Login []string
}

// ErrBadCategory is returned (wrapped) for a category a purpose cannot declare: an unknown name,
// or a category other than Session, LoadBalancer and CSRF.
var ErrBadCategory = errors.New("cookies: not a declarable cookie category")

// ErrBadAllow is returned (wrapped) for an allow-list entry that is not a cookie name, or that
// names a cookie which is never kept (or a login cookie, which Purpose.Login keeps).
var ErrBadAllow = errors.New("cookies: bad allow-list entry")

// ErrBadLogin is returned (wrapped) for a Purpose.Login entry that is not an http(s) origin.
var ErrBadLogin = errors.New("cookies: bad login origin")

// declarable lists the categories a purpose may declare, in the order messages name them.
var declarable = []Category{Session, LoadBalancer, CSRF}

func declarableNames() string {
	s := make([]string, len(declarable))
	for i, c := range declarable {
		s[i] = c.String()
	}
	return strings.Join(s, ", ")
}

// ParseCategories parses a comma-separated list of declarable category names
// ("session,loadbalancer"), as a configuration file or command line writes them. Names are
// matched case-insensitively, spaces around them are ignored and duplicates dropped; an empty
// string gives none. Any other name is an error wrapping [ErrBadCategory] that lists the names
// a purpose may declare.
func ParseCategories(s string) ([]Category, error) {
	var out []Category
	for f := range strings.SplitSeq(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "" {
			continue
		}
		i := slices.IndexFunc(declarable, func(c Category) bool { return c.String() == f })
		if i < 0 {
			return nil, fmt.Errorf("%w %q; a purpose may declare %s", ErrBadCategory, f, declarableNames())
		}
		if !slices.Contains(out, declarable[i]) {
			out = append(out, declarable[i])
		}
	}
	return out, nil
}

// Validate reports the first problem of p that [NewJar] would refuse: a category that cannot be
// declared ([ErrBadCategory]), an allow-list entry that is not a cookie name or names a cookie
// that is never kept or a login cookie ([ErrBadAllow]), or a login entry that is not an origin
// ([ErrBadLogin]). A nil error means NewJar accepts p.
func (p Purpose) Validate() error {
	_, err := p.compile()
	return err
}

// keepRules is a validated Purpose in the form the jar consults.
type keepRules struct {
	categories map[Category]bool
	allow      map[string]bool
	allowP     []string        // allow-list prefixes, without the "*"
	login      map[string]bool // origin.RobotsKey of each Purpose.Login origin
}

// LoginOrigins returns the origins of p.Login as the jar keys them ("https://host", the default
// port left out; "http://host:8080"), in order and without duplicates; entries that are not an
// origin are left out ([Purpose.Validate] reports them).
func (p Purpose) LoginOrigins() []string {
	var out []string
	for _, s := range p.Login {
		if k, err := loginOrigin(s); err == nil && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// loginOrigin returns the origin key of a Purpose.Login entry: an absolute http(s) URL with a
// host and nothing after it but an optional "/". A path, query, fragment or user name is refused
// rather than dropped, so that "https://site/members" does not silently mean the whole origin.
func loginOrigin(s string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "" {
		return "", fmt.Errorf("%w %q in Purpose.Login: name an origin, scheme://host[:port], such as \"https://members.example.org\"", ErrBadLogin, s)
	}
	k, err := origin.RobotsKey(u)
	if err != nil {
		return "", fmt.Errorf("%w %q in Purpose.Login: %v", ErrBadLogin, s, err)
	}
	return k, nil
}

func (p Purpose) compile() (keepRules, error) {
	r := keepRules{categories: map[Category]bool{}, allow: map[string]bool{}, login: map[string]bool{}}
	for _, s := range p.Login {
		k, err := loginOrigin(s)
		if err != nil {
			return keepRules{}, err
		}
		r.login[k] = true
	}
	for _, c := range p.Categories {
		if c == Login {
			return keepRules{}, fmt.Errorf("%w: login (in Purpose.Categories); name the origins the crawler signs in to in Purpose.Login", ErrBadCategory)
		}
		if !c.Declarable() {
			return keepRules{}, fmt.Errorf("%w: %s (in Purpose.Categories); a purpose may declare %s", ErrBadCategory, c, declarableNames())
		}
		r.categories[c] = true
	}
	for _, a := range p.Allow {
		a = strings.TrimSpace(a)
		name, isPrefix := strings.CutSuffix(a, "*")
		if name == "" || strings.IndexFunc(name, notTokenRune) >= 0 {
			return keepRules{}, fmt.Errorf("%w %q: not a cookie name (RFC 6265 §4.1.1: a token); remove it from Purpose.Allow", ErrBadAllow, a)
		}
		if isPrefix {
			r.allowP = append(r.allowP, name)
			continue
		}
		switch c := Classify(name); {
		case c.NeverKept():
			return keepRules{}, fmt.Errorf("%w %q: %s cookies are never kept; remove it from Purpose.Allow", ErrBadAllow, a, c)
		case c == Login:
			return keepRules{}, fmt.Errorf("%w %q: a login cookie is kept only for the origins in Purpose.Login; name the site's origin there instead", ErrBadAllow, a)
		}
		r.allow[name] = true
	}
	return r, nil
}

// notTokenRune reports characters outside an RFC 9110 token, which a cookie name must be.
func notTokenRune(r rune) bool {
	if r <= ' ' || r >= 0x7f {
		return true
	}
	return strings.ContainsRune(`()<>@,;:\"/[]?={}`, r)
}

// keeps reports whether the purpose keeps a cookie of category cat named name for the origin key
// (origin.RobotsKey): never one of the never-kept categories; on a login origin the login,
// session, CSRF and load-balancer cookies; a login cookie nowhere else; otherwise a declared
// category or an allow-listed name.
func (r keepRules) keeps(key string, cat Category, name string) bool {
	switch {
	case cat.NeverKept():
		return false
	case r.login[key] && (cat == Login || cat.Declarable()):
		return true
	case cat == Login:
		return false
	case r.categories[cat] || r.allow[name]:
		return true
	}
	for _, p := range r.allowP {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
