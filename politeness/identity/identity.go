// Package identity builds and validates the User-Agent a crawler sends, so that a site operator
// can tell who is crawling, address the crawler in robots.txt and reach the people running it.
//
// An [Identity] is either built from its parts (a struct literal) or read from a whole User-Agent
// string with [Parse]. Both paths apply the same rules and report every problem at once, each
// with how to fix it, in terms of the Identity's fields ([Problem], [Field]). Two grammars exist:
//
//   - [Generic]: Token/Version (+https://info-url; mailto:contact). The product token is what a
//     robots.txt User-agent line names, so it must follow RFC 9309 §2.2.1 (letters, '_' and '-')
//     and appear in the User-Agent. The form RFC 9309 §2.2.1 itself shows,
//     Mozilla/5.0 (compatible; Token/Version; +https://info-url), is accepted too.
//   - [FAU]: FAU-<ORG>-<BOT>/<VERSION> (+<INFO-URL>;mailto:<CONTACT>), the format of the RRZE
//     crawler rules (v1.5) of Friedrich-Alexander-Universität Erlangen-Nürnberg.
//
// Both refuse a User-Agent that disguises a crawler as a web browser, the names of well-known
// crawlers run by others (Googlebot, GPTBot, …), the bare names of HTTP libraries and tools
// (curl, python-requests, colly, …) in place of a bot name, and library defaults such as
// Colly's "colly - https://github.com/gocolly/colly", and a User-Agent longer than
// [MaxUserAgentLen] bytes. There is no default identity: a zero Identity is an error
// ([ErrNoIdentity]) that names the fields to set.
//
// The User-Agent is a courtesy to site operators, not a credential: anyone can send any string,
// so nothing in this project grants or denies trust on the strength of a User-Agent.
package identity

import (
	"errors"
	"fmt"
	"strings"
)

// MaxUserAgentLen is the longest User-Agent, in bytes, that [Identity.Validate] and [Parse]
// accept, for the crawl and the user-triggered form alike. Real crawler User-Agents are under
// 200 bytes; servers limit a header line to a few kilobytes and answer beyond it with 400 or 431,
// which for robots.txt would read as "no robots.txt" (RFC 9309 §2.3.1.3).
const MaxUserAgentLen = 512

// Profile is a User-Agent grammar. The zero value ("") means [Generic].
type Profile string

const (
	// Generic is Token/Version (+https://info-url; mailto:contact).
	Generic Profile = "generic"
	// FAU is FAU-<ORG>-<BOT>/<VERSION> (+<INFO-URL>;mailto:<CONTACT>) (RRZE crawler rules v1.5).
	FAU Profile = "fau"
)

// ParseProfile reads a profile name as given on a command line: "generic" or "fau", in any case,
// with "" meaning [Generic].
func ParseProfile(s string) (Profile, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", string(Generic):
		return Generic, nil
	case string(FAU):
		return FAU, nil
	}
	return "", fmt.Errorf("unknown identity profile %q: use %q or %q", s, Generic, FAU)
}

// Detect guesses the profile of a User-Agent: [FAU] when it starts with "FAU-", else [Generic].
// It is a convenience for tools that check strings of unknown origin; callers that know which
// rules apply should name the profile.
func Detect(ua string) Profile {
	if strings.HasPrefix(strings.TrimLeft(ua, " \t"), "FAU-") {
		return FAU
	}
	return Generic
}

// normalized returns the profile with "" read as Generic, and whether it is known.
func (p Profile) normalized() (Profile, bool) {
	switch p {
	case "", Generic:
		return Generic, true
	case FAU:
		return FAU, true
	}
	return p, false
}

// Identity is who the crawler says it is. Build one from its parts, or read one with [Parse];
// call [Identity.Validate] before use, then [Identity.UserAgent] (and [Identity.From]) give the
// header values. The zero value is "no identity": Validate reports [ErrNoIdentity].
//
// Which parts a profile uses:
//
//   - Generic: Token, Version, InfoURL, Contact (recommended), UserToken (optional).
//   - FAU: Org, Bot, Version, InfoURL, Contact (required), UserToken (optional). Token stays
//     empty: the product token is derived, FAU-<Org>-<Bot> ([Identity.CrawlToken]).
type Identity struct {
	Profile   Profile
	Token     string // Generic: the product token robots.txt names, e.g. ExampleBot
	Org, Bot  string // FAU: the organisation (e.g. RRZE) and the bot's name (e.g. Legalcheck)
	Version   string // e.g. 1.0; FAU requires digits and dots with at least one dot
	InfoURL   string // absolute URL of a page about the crawler (https for FAU)
	Contact   string // e-mail address of the operator, without "mailto:"
	UserToken string // overrides the user-triggered token (default <crawl token>-User)

	// Verbatim is the User-Agent exactly as it was configured, when that differs from the
	// canonical form the parts produce (for example the Mozilla/5.0 (compatible; …) form, or
	// FAU's legacy "; mailto:"). Parse sets it so that the configured string is what is sent;
	// builders leave it empty. When set, it must agree with the parts (Validate checks).
	Verbatim string
}

// IsZero reports whether no identity is configured: every part other than Profile is empty.
// (A profile alone identifies nobody.)
func (id Identity) IsZero() bool {
	id.Profile = ""
	return id == Identity{}
}

// CrawlToken is the product token by which robots.txt User-agent lines address this crawler
// (RFC 9309 §2.2.1): Token in the generic profile, FAU-<Org>-<Bot> in the FAU profile. It is ""
// for a zero Identity.
func (id Identity) CrawlToken() string {
	if p, _ := id.Profile.normalized(); p == FAU {
		if id.Org == "" && id.Bot == "" {
			return ""
		}
		return "FAU-" + id.Org + "-" + id.Bot
	}
	return id.Token
}

// UserTriggeredToken is the product token for fetches a person asked for (rather than the
// crawl's own discovery): UserToken when set, otherwise the crawl token with "-User" appended,
// e.g. ExampleBot-User or FAU-RRZE-Legalcheck-User. A site can address it in robots.txt
// separately from the crawler.
func (id Identity) UserTriggeredToken() string {
	if id.UserToken != "" {
		return id.UserToken
	}
	if t := id.CrawlToken(); t != "" {
		return t + "-User"
	}
	return ""
}

// UserAgent is the User-Agent to send: Verbatim when set, otherwise the canonical form,
//
//	Generic: Token/Version (+InfoURL; mailto:Contact)   (without "; mailto:…" when no contact)
//	FAU:     FAU-Org-Bot/Version (+InfoURL;mailto:Contact)
//
// The result is meaningful only for an identity that passed Validate.
func (id Identity) UserAgent() string {
	if id.Verbatim != "" {
		return id.Verbatim
	}
	return id.canonical(id.CrawlToken())
}

// UserTriggeredAgent is the User-Agent for user-triggered fetches: [Identity.UserAgent] with
// [Identity.UserTriggeredToken] in place of the crawl token, every other part unchanged.
func (id Identity) UserTriggeredAgent() string {
	crawl, user := id.CrawlToken(), id.UserTriggeredToken()
	if id.Verbatim != "" && crawl != "" {
		if i := productIndex(id.Verbatim, crawl+"/"+id.Version); i >= 0 {
			return id.Verbatim[:i] + user + id.Verbatim[i+len(crawl):]
		}
	}
	return id.canonical(user)
}

// productIndex returns the index of the first occurrence of product in ua that stands alone,
// delimited by the ends of ua, blanks, '(', ')' or ';', or -1. (A bare substring search would
// find a/5.0 inside Mozilla/5.0.)
func productIndex(ua, product string) int {
	delim := func(b byte) bool { return strings.IndexByte(" \t();", b) >= 0 }
	for off := 0; ; {
		i := strings.Index(ua[off:], product)
		if i < 0 {
			return -1
		}
		i += off
		end := i + len(product)
		if (i == 0 || delim(ua[i-1])) && (end == len(ua) || delim(ua[end])) {
			return i
		}
		off = i + 1
	}
}

// From is the value for the From header, the operator's e-mail address (RFC 9110 §10.1.2: a
// robot agent should send it), or "" when no contact is configured.
func (id Identity) From() string { return id.Contact }

// canonical composes the canonical User-Agent of id's profile with token as the product token.
func (id Identity) canonical(token string) string {
	var b strings.Builder
	b.WriteString(token)
	b.WriteString("/")
	b.WriteString(id.Version)
	b.WriteString(" (+")
	b.WriteString(id.InfoURL)
	if p, _ := id.Profile.normalized(); p == FAU {
		b.WriteString(";mailto:")
		b.WriteString(id.Contact)
	} else if id.Contact != "" {
		b.WriteString("; mailto:")
		b.WriteString(id.Contact)
	}
	b.WriteString(")")
	return b.String()
}

// Validate checks the identity against its profile's rules. It returns every problem at once:
// errors in a [*ValidationError] (nil when the identity is usable), and warnings, which do not
// make the identity unusable but deserve a look (a missing contact in the generic profile,
// digits in a FAU token). A zero identity yields [ErrNoIdentity].
func (id Identity) Validate() (warnings []Problem, err error) {
	if id.IsZero() {
		return nil, ErrNoIdentity
	}
	var c checker
	c.fields(id)
	if id.Verbatim != "" && len(c.errs) == 0 {
		c.verbatim(id)
	}
	c.length(id)
	return c.warns, c.err()
}

// Problem is one thing wrong with an identity, or, as a warning, worth fixing. Message and Fix
// speak of the Identity's fields as Identity.Token, Identity.InfoURL, …, so that a program that
// sets those fields from its own configuration (flags, a file) can name its own settings
// instead.
type Problem struct {
	Field   Field
	Message string // what is wrong, and why it matters
	Fix     string // what to change
}

// Field names the part of an identity a [Problem] concerns: an [Identity] field by its Go name,
// or [FieldUserAgent] for the User-Agent string as a whole.
type Field string

// The fields.
const (
	// FieldUserAgent is the whole User-Agent: the string given to [Parse] (its structure, its
	// characters) or, for an identity built from parts, the string they compose (its length).
	FieldUserAgent Field = "UserAgent"
	FieldProfile   Field = "Profile"
	FieldToken     Field = "Token"
	FieldOrg       Field = "Org"
	FieldBot       Field = "Bot"
	FieldVersion   Field = "Version"
	FieldInfoURL   Field = "InfoURL"
	FieldContact   Field = "Contact"
	FieldUserToken Field = "UserToken"
	FieldVerbatim  Field = "Verbatim"
)

// String renders the problem on one line: "field: message (fix: fix)".
func (p Problem) String() string {
	return string(p.Field) + ": " + p.Message + " (fix: " + p.Fix + ")"
}

// ValidationError lists every problem of an invalid identity. errors.Is(err, ErrInvalid) holds
// for it.
type ValidationError struct{ Problems []Problem }

// Error lists every problem, one per line, each with its fix.
func (e *ValidationError) Error() string {
	var b strings.Builder
	switch len(e.Problems) {
	case 0:
		return "invalid crawler identity"
	case 1:
		b.WriteString("invalid crawler identity (1 problem):")
	default:
		fmt.Fprintf(&b, "invalid crawler identity (%d problems):", len(e.Problems))
	}
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrInvalid) true for every *ValidationError.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// ErrInvalid matches every [*ValidationError] under errors.Is.
var ErrInvalid = errors.New("invalid crawler identity")

// ErrNoIdentity is returned when no identity is configured at all. There is deliberately no
// default: every crawler must say who runs it.
var ErrNoIdentity = errors.New("no crawler identity configured: " +
	"set Identity.Token, Identity.Version, Identity.InfoURL and Identity.Contact (the generic profile); " +
	"or Identity.Profile = identity.FAU with Identity.Org, Identity.Bot, Identity.Version, Identity.InfoURL and Identity.Contact; " +
	"or read a whole User-Agent string with identity.Parse")
