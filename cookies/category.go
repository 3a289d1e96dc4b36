package cookies

// This file decides the one taxonomy of cookies: what a cookie is for, and what that means for
// keeping it.

// Category is what a cookie is for: the classifier's answer ([Lookup]) and the unit a [Purpose]
// declares. The first six come from the Open Cookie Database's "Category" column; the others are
// this package's own (see the package documentation for the lists behind them). Every category is
// in exactly one of four groups: never kept ([Category.NeverKept]), declarable
// ([Category.Declarable]: kept when a purpose declares it), Login (kept only for the origins a
// purpose signs in to, [Purpose.Login]), or kept only by name ([Purpose.Allow]). The zero value
// is Unknown: a name neither the data nor our lists know.
type Category uint8

// The categories.
const (
	Unknown Category = iota

	// From the Open Cookie Database.
	Functional
	Security
	Necessary // outside upstream's own validator list, but present in the data
	Personalization
	Analytics
	Marketing

	// Our reclassification of names the data files as Functional (or does not list). Consent,
	// AntiBot and Paywall are never kept, whatever a purpose allows; Login only for the origins
	// of Purpose.Login.
	Consent
	AntiBot
	Login
	Paywall

	// Declarable: kept when a purpose declares the category (Purpose.Categories).
	Session
	LoadBalancer
	CSRF

	numCategories
)

var categoryNames = [numCategories]string{
	Unknown:         "unknown",
	Functional:      "functional",
	Security:        "security",
	Necessary:       "necessary",
	Personalization: "personalization",
	Analytics:       "analytics",
	Marketing:       "marketing",
	Consent:         "consent",
	AntiBot:         "anti-bot",
	Login:           "login",
	Paywall:         "paywall",
	Session:         "session",
	LoadBalancer:    "loadbalancer",
	CSRF:            "csrf",
}

// String returns the category's lower-case name ("analytics", "anti-bot", "loadbalancer", …),
// the key [Jar.Refused] counts under.
func (c Category) String() string {
	if c < numCategories {
		return categoryNames[c]
	}
	return "unknown"
}

// NeverKept reports whether cookies of this category are refused whatever a [Purpose] allows:
// Analytics, Marketing, Personalization, Consent, AntiBot and Paywall. (Login is kept, but only
// for the origins of [Purpose.Login].)
func (c Category) NeverKept() bool {
	switch c {
	case Analytics, Marketing, Personalization, Consent, AntiBot, Paywall:
		return true
	}
	return false
}

// Declarable reports whether a [Purpose] may declare the category: Session, LoadBalancer and
// CSRF, the cookies a task can technically need. Login cookies are kept only for the origins of
// [Purpose.Login]; cookies of the other categories only by name ([Purpose.Allow]), and never when
// [Category.NeverKept].
func (c Category) Declarable() bool {
	switch c {
	case Session, LoadBalancer, CSRF:
		return true
	}
	return false
}

// restrictiveness orders categories for resolving duplicate names in the data: when two entries
// disagree, the one that keeps fewer cookies wins, because a wrong refusal costs a crawler a
// cookie it can allow-list while a wrong keep leaks a tracker.
func (c Category) restrictiveness() int {
	switch c {
	case Marketing:
		return 10
	case Analytics:
		return 9
	case Personalization:
		return 8
	case AntiBot:
		return 7
	case Consent:
		return 6
	case Login:
		return 5
	case Paywall:
		return 4
	case Functional:
		return 3
	case Security:
		return 2
	case Necessary:
		return 1
	}
	return 0
}

// Source says which rule classified a name.
type Source uint8

// The sources.
const (
	// NoMatch: nothing matched; the category is Unknown.
	NoMatch Source = iota
	// OurRule: one of this package's own lists (consent, anti-bot, login, paywall, session,
	// loadbalancer, csrf), matched ASCII case-insensitively.
	OurRule
	// DataExact: an exact name in the Open Cookie Database (case-sensitive first, then folded).
	DataExact
	// DataPrefix: a prefix ("Wildcard match" = 1, or a placeholder) in the Open Cookie Database.
	DataPrefix
)

func (s Source) String() string {
	switch s {
	case OurRule:
		return "ours"
	case DataExact:
		return "data-exact"
	case DataPrefix:
		return "data-prefix"
	}
	return "none"
}

// Match is a classification with its evidence. The zero value is "unknown, nothing matched".
type Match struct {
	Category Category
	Source   Source
	// Pattern is the name or prefix that matched; our prefixes end in "*", and "*consent*" is our
	// substring rule. Empty when nothing matched.
	Pattern string
	// Platform is the data's platform column (e.g. "Google Analytics"); empty for our rules.
	Platform string
	// DataCategory is the category the data files the entry under; it differs from Category when
	// a platform rule reclassified the entry (a OneTrust "Functional" entry is Consent here).
	DataCategory Category
}
