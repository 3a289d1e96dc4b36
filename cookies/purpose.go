package cookies

// This file decides what a task may declare it needs: which categories and which further names.

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Purpose declares which cookies a task technically needs. The zero value needs none: a jar with
// it keeps nothing (every cookie is refused and counted).
type Purpose struct {
	// Categories the task needs kept: only the declarable ones, [Session], [LoadBalancer] and
	// [CSRF] (see [Category.Declarable]). [ParseCategories] reads them from "session,csrf".
	Categories []Category
	// Allow lists further cookie names to keep: exact names, or a prefix ending in "*"
	// ("myapp_*"). Names are case-sensitive (RFC 6265 §5.3). An allowed name is still refused when
	// its category is never kept (analytics, marketing, personalization, consent, anti-bot, login,
	// paywall), when it comes with a Domain of another site, when it is Partitioned, and, if the
	// classifier does not know it, when it is SameSite=None.
	Allow []string
}

// ErrBadCategory is returned (wrapped) for a category a purpose cannot declare: an unknown name,
// or a category other than Session, LoadBalancer and CSRF.
var ErrBadCategory = errors.New("cookies: not a declarable cookie category")

// ErrBadAllow is returned (wrapped) for an allow-list entry that is not a cookie name, or that
// names a cookie which is never kept.
var ErrBadAllow = errors.New("cookies: bad allow-list entry")

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
// declared ([ErrBadCategory]), or an allow-list entry that is not a cookie name or names a cookie
// that is never kept ([ErrBadAllow]). A nil error means NewJar accepts p.
func (p Purpose) Validate() error {
	_, err := p.compile()
	return err
}

// keepRules is a validated Purpose in the form the jar consults.
type keepRules struct {
	categories map[Category]bool
	allow      map[string]bool
	allowP     []string // allow-list prefixes, without the "*"
}

func (p Purpose) compile() (keepRules, error) {
	r := keepRules{categories: map[Category]bool{}, allow: map[string]bool{}}
	for _, c := range p.Categories {
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
		if c := Classify(name); c.NeverKept() {
			return keepRules{}, fmt.Errorf("%w %q: %s cookies are never kept; remove it from Purpose.Allow", ErrBadAllow, a, c)
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

// keeps reports whether the purpose keeps a cookie of category cat named name: a declared
// category, or an allow-listed name. The never-kept categories are the jar's to refuse first.
func (r keepRules) keeps(cat Category, name string) bool {
	if r.categories[cat] || r.allow[name] {
		return true
	}
	for _, p := range r.allowP {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
