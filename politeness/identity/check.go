package identity

import (
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"regexp"
	"strings"
)

// checker collects problems. skip names fields whose problem a structural check (in Parse) has
// already reported, so that one mistake yields one problem, not two.
type checker struct {
	errs, warns []Problem
	skip        map[Field]bool
}

func (c *checker) fail(field Field, msg, fix string) {
	c.errs = append(c.errs, Problem{Field: field, Message: msg, Fix: fix})
}

func (c *checker) warn(field Field, msg, fix string) {
	c.warns = append(c.warns, Problem{Field: field, Message: msg, Fix: fix})
}

func (c *checker) skipField(fields ...Field) {
	if c.skip == nil {
		c.skip = map[Field]bool{}
	}
	for _, f := range fields {
		c.skip[f] = true
	}
}

func (c *checker) err() error {
	if len(c.errs) == 0 {
		return nil
	}
	return &ValidationError{Problems: c.errs}
}

// fields checks every part of id against its profile; it does not look at Verbatim.
func (c *checker) fields(id Identity) {
	p, ok := id.Profile.normalized()
	if !ok {
		c.fail(FieldProfile, fmt.Sprintf("unknown profile %q", id.Profile),
			"set Identity.Profile to identity.Generic (Token/Version (+URL; mailto:EMAIL)) or identity.FAU (FAU-ORG-BOT/VERSION (+URL;mailto:EMAIL))")
		return
	}
	if p == FAU {
		c.fauFields(id)
	} else {
		c.genericFields(id)
	}
}

func (c *checker) genericFields(id Identity) {
	if id.Org != "" || id.Bot != "" {
		c.fail(FieldProfile, "org and bot are parts of the FAU profile, but the profile is generic",
			"set Identity.Profile to identity.FAU, or use Identity.Token instead of Identity.Org and Identity.Bot")
	}
	if !c.skip[FieldToken] {
		c.genericToken(FieldToken, id.Token)
	}
	if !c.skip[FieldVersion] {
		c.genericVersion(id.Version)
	}
	if !c.skip[FieldInfoURL] {
		c.infoURL(id.InfoURL, false)
	}
	if !c.skip[FieldContact] {
		if id.Contact == "" {
			c.warn(FieldContact, "no contact e-mail address: a site operator with a problem cannot write to you",
				"set Identity.Contact to the operator's e-mail address, or add \"; mailto:EMAIL\" to the comment of a User-Agent string; or make sure the info page says how to reach the operator")
		} else {
			c.email(id.Contact)
		}
	}
	if id.UserToken != "" {
		c.genericToken(FieldUserToken, id.UserToken)
		c.distinctUserToken(id)
	}
}

func (c *checker) fauFields(id Identity) {
	if id.Token != "" && id.Token != id.CrawlToken() {
		c.fail(FieldToken, fmt.Sprintf("the FAU profile derives the product token from org and bot (FAU-<ORG>-<BOT>), but the token is set to %q", id.Token),
			"leave Identity.Token empty and set Identity.Org and Identity.Bot")
	}
	if !c.skip[FieldOrg] {
		c.fauPart(FieldOrg, id.Org)
	}
	if !c.skip[FieldBot] {
		c.fauPart(FieldBot, id.Bot)
	}
	if !c.skip[FieldVersion] {
		c.fauVersion(id.Version)
	}
	if !c.skip[FieldInfoURL] {
		c.infoURL(id.InfoURL, true)
	}
	if !c.skip[FieldContact] {
		if id.Contact == "" {
			c.fail(FieldContact, "no contact e-mail address: the RRZE crawler rules require one",
				"set Identity.Contact to the operator's e-mail address, or write ;mailto:EMAIL after the info URL in a User-Agent string, e.g. ;mailto:webmaster@fau.de")
		} else {
			c.email(id.Contact)
		}
	}
	if id.UserToken != "" {
		if !fauToken.MatchString(id.UserToken) {
			c.fail(FieldUserToken, fmt.Sprintf("%q is not of the form FAU-<ORG>-<BOT>, which the RRZE rules require of every FAU User-Agent", id.UserToken),
				"leave Identity.UserToken empty (FAU-<ORG>-<BOT>-User is the default), or use e.g. FAU-RRZE-Legalcheck-Manual")
		}
		c.distinctUserToken(id)
	}
}

// fauToken is the FAU product token, the part of the RRZE prefix regex before the slash.
var fauToken = regexp.MustCompile(`^FAU-[A-Za-z0-9_-]+-[A-Za-z0-9_-]+$`)

// distinctUserToken: RFC 9309 §2.2.1 matches product tokens case-insensitively, so a user token
// equal to the crawl token up to case would give robots.txt no way to tell the two apart.
func (c *checker) distinctUserToken(id Identity) {
	if crawl := id.CrawlToken(); crawl != "" && strings.EqualFold(id.UserToken, crawl) {
		c.fail(FieldUserToken, fmt.Sprintf("the user token %q is the crawl token, so robots.txt cannot address user-triggered fetches separately", id.UserToken),
			"leave Identity.UserToken empty (the default is "+crawl+"-User) or choose another name")
	}
}

// genericToken checks a product token against RFC 9309 §2.2.1 (1*(ALPHA / "_" / "-")) and the
// naming rules: no technology names, no browser names, not only generic words.
func (c *checker) genericToken(field Field, tok string) {
	if tok == "" {
		c.fail(field, "no product token: robots.txt has no name to address the crawler by",
			"set Identity."+string(field)+": letters, '_' and '-' only, named after your project, e.g. ExampleBot")
		return
	}
	if bad := badChars(tok, isTokenChar); bad != "" {
		msg := fmt.Sprintf("%q contains %s; an RFC 9309 §2.2.1 product token has only letters, '_' and '-'", tok, bad)
		fix := "remove or replace those characters, e.g. " + suggestToken(tok)
		if strings.ContainsAny(tok, "0123456789") && badChars(tok, func(b byte) bool { return isTokenChar(b) || isDigit(b) }) == "" {
			msg += " (digits are not allowed, so robots.txt parsers would not match it)"
			fix = "spell the digits out or drop them, e.g. " + suggestToken(tok)
		}
		c.fail(field, msg, fix)
	}
	c.name(field, tok, true)
}

// fauPart checks ORG or BOT of FAU-<ORG>-<BOT> against the RRZE grammar [A-Za-z0-9_-]+.
func (c *checker) fauPart(field Field, part string) {
	upper := strings.ToUpper(string(field))
	if part == "" {
		example := "RRZE"
		if field == FieldBot {
			example = "Legalcheck"
		}
		c.fail(field, "no "+upper+": a FAU crawler is named FAU-<ORG>-<BOT>",
			"set Identity."+string(field)+", e.g. "+example+" (for FAU-RRZE-Legalcheck)")
		return
	}
	if bad := badChars(part, func(b byte) bool { return isTokenChar(b) || isDigit(b) }); bad != "" {
		c.fail(field, fmt.Sprintf("%s %q contains %s; the RRZE rules allow letters, digits, '_' and '-'", upper, part, bad),
			"remove or replace those characters")
		return
	}
	if field == FieldOrg && strings.Contains(part, "-") {
		c.fail(field, fmt.Sprintf("ORG %q contains '-', so FAU-%s-<BOT> cannot be read back: the ORG is everything between the first and second '-'", part, part),
			"drop the '-' or use '_' in Identity.Org, e.g. "+strings.ReplaceAll(part, "-", "_"))
	}
	if field == FieldBot && strings.HasPrefix(strings.ToUpper(part), "FAU-") {
		c.fail(field, fmt.Sprintf("BOT %q repeats the FAU- prefix, which is added for you", part),
			"set Identity.Bot to the bot's own name only, e.g. Legalcheck")
		return
	}
	if strings.ContainsAny(part, "0123456789") {
		c.warn(field, fmt.Sprintf("%s %q contains digits: the RRZE rules allow them, but RFC 9309 §2.2.1 product tokens do not, so some robots.txt parsers will not match a User-agent line naming this crawler (ours does)", upper, part),
			"nothing required; to be matched by every parser, spell the digits out or drop them")
	}
	if field == FieldBot {
		c.name(field, part, false)
	}
}

// name rejects technology and browser names; a name made only of generic words (Bot, Crawler) is
// an error for a generic token, which would then address nobody in particular, and a warning for
// a FAU bot, which FAU-<ORG>- already sets apart.
func (c *checker) name(field Field, name string, genericIsError bool) {
	switch kind, what := classifyName(name); kind {
	case techName:
		c.fail(field, fmt.Sprintf("%q is the name of a technology (%s), not of a crawler: it says nothing about who runs the bot, and library defaults look like unconfigured scripts", name, what),
			"name the crawler after the project or organisation behind it, e.g. ExampleBot; the library may appear as a later product, e.g. ExampleBot/1.0 (+https://example.org/bot) colly/2.3.0")
	case otherCrawler:
		c.fail(field, fmt.Sprintf("%q is the name of a crawler run by %s: sites would apply that crawler's robots.txt rules to yours, and reports about yours would reach them", name, what),
			"name the crawler after the project or organisation behind it, e.g. ExampleBot")
	case browserName:
		c.fail(field, fmt.Sprintf("%q is a web browser's name: a crawler must not pass for a browser", name),
			"name the crawler after the project or organisation behind it, e.g. ExampleBot")
	case genericOnly:
		msg := fmt.Sprintf("%q is only a generic word: it does not tell site operators which crawler this is", name)
		fix := "name the crawler after the project or purpose, e.g. ExampleBot or Legalcheck"
		if genericIsError {
			c.fail(field, msg, fix)
		} else {
			c.warn(field, msg, fix)
		}
	}
}

// genericVersion checks a product version: an RFC 9110 §5.6.2 token (product-version = token,
// RFC 9110 §10.1.5).
func (c *checker) genericVersion(v string) {
	if v == "" {
		c.fail(FieldVersion, "no version: the User-Agent must read Token/Version",
			"set Identity.Version, or append /V to the name in a User-Agent string, e.g. 1.0")
		return
	}
	if bad := badChars(v, isTchar); bad != "" {
		c.fail(FieldVersion, fmt.Sprintf("version %q contains %s; a product version is an RFC 9110 token (letters, digits, .-_ and similar, no spaces or '/')", v, bad),
			"use a version like 1.0 or 2.3.1")
	}
}

var fauVersion = regexp.MustCompile(`^[0-9]+(\.[0-9]+)+$`)

func (c *checker) fauVersion(v string) {
	if v == "" {
		c.fail(FieldVersion, "no version: a FAU User-Agent reads FAU-<ORG>-<BOT>/<VERSION>",
			"set Identity.Version, or append /V to the name in a User-Agent string, e.g. 1.0")
		return
	}
	if !fauVersion.MatchString(v) {
		c.fail(FieldVersion, fmt.Sprintf("version %q is not digits separated by dots with at least one dot, as the RRZE rules require ([0-9]+(\\.[0-9]+)+)", v),
			"use a version like 1.0 or 2.3.1")
	}
}

// infoURL checks the page that explains the crawler: absolute, http(s) (https only for FAU),
// with a host, and free of what would break the User-Agent comment or leak credentials.
func (c *checker) infoURL(raw string, httpsOnly bool) {
	const f = FieldInfoURL
	want := "http(s)"
	if httpsOnly {
		want = "https"
	}
	if raw == "" {
		c.fail(f, "no info URL: site operators need a page that explains the crawler",
			"set Identity.InfoURL, or write (+URL) after the version in a User-Agent string; an absolute "+want+" URL such as https://example.org/bot")
		return
	}
	if bad := badChars(raw, func(b byte) bool { return b > ' ' && b < 0x7f }); bad != "" {
		c.fail(f, fmt.Sprintf("info URL %q contains %s", raw, bad),
			"percent-encode those characters (a space is %20; a non-ASCII host is written in its xn-- form)")
		return
	}
	if strings.ContainsAny(raw, ";()\\") {
		c.fail(f, fmt.Sprintf("info URL %q contains ';', '(', ')' or '\\', which would end the User-Agent comment early", raw),
			"percent-encode them: ; is %3B, ( is %28, ) is %29, \\ is %5C")
		return
	}
	u, err := url.Parse(raw)
	if err != nil {
		c.fail(f, fmt.Sprintf("info URL %q does not parse: %v", raw, err),
			"give an absolute "+want+" URL, e.g. https://example.org/bot")
		return
	}
	switch {
	case !u.IsAbs() || u.Host == "" || u.Opaque != "":
		c.fail(f, fmt.Sprintf("info URL %q is not an absolute URL with a host", raw),
			"give an absolute "+want+" URL, e.g. https://example.org/bot")
	case u.Scheme != "http" && u.Scheme != "https":
		c.fail(f, fmt.Sprintf("info URL %q uses the %s scheme; the info page needs an %s URL", raw, u.Scheme, want),
			"give an absolute "+want+" URL, e.g. https://example.org/bot")
	case httpsOnly && u.Scheme != "https":
		c.fail(f, fmt.Sprintf("info URL %q is not https, which the RRZE rules require", raw),
			"serve the info page over https and give that URL")
	case u.User != nil:
		c.fail(f, fmt.Sprintf("info URL %q contains user information, which every request would disclose", raw),
			"remove the user:password@ part")
	case u.Scheme == "http":
		c.warn(f, fmt.Sprintf("info URL %q is plain http", raw), "serve the info page over https if you can")
	}
}

// email checks the contact address. net/mail parses RFC 5322 addresses; on top of it we require
// a bare addr-spec (no display name, no quoting) in ASCII with a dotted domain name, since the
// address is written into the User-Agent comment and the From header (RFC 9110 §10.1.2 mailbox).
func (c *checker) email(addr string) {
	const f = FieldContact
	fix := "give a plain address such as webmaster@example.org (no name, no <>, no mailto:)"
	if strings.HasPrefix(strings.ToLower(addr), "mailto:") {
		c.fail(f, fmt.Sprintf("contact %q starts with mailto:, which is added for you", addr), "drop the mailto: prefix")
		return
	}
	if bad := badChars(addr, func(b byte) bool { return b > ' ' && b < 0x7f && !strings.ContainsRune(`;()<>,"\[]`, rune(b)) }); bad != "" {
		c.fail(f, fmt.Sprintf("contact %q contains %s", addr, bad), fix)
		return
	}
	a, err := mail.ParseAddress(addr)
	if err != nil || a.Name != "" || a.Address != addr {
		c.fail(f, fmt.Sprintf("contact %q is not a valid e-mail address", addr), fix)
		return
	}
	_, domain, _ := strings.Cut(addr, "@")
	if !isDomainName(domain) {
		c.fail(f, fmt.Sprintf("contact %q has no valid domain name after the @", addr), fix)
	}
}

// isDomainName reports whether d is an ASCII host name of two or more labels of letters, digits
// and inner hyphens (RFC 1035 §2.3.1 preferred syntax, digits allowed first per RFC 1123).
func isDomainName(d string) bool {
	labels := strings.Split(d, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		if badChars(l, func(b byte) bool { return isAlpha(b) || isDigit(b) || b == '-' }) != "" {
			return false
		}
	}
	return true
}

// verbatim checks that a configured Verbatim User-Agent parses in the profile and says what the
// parts say, so that the string sent and the tokens robots.txt is matched with cannot diverge.
func (c *checker) verbatim(id Identity) {
	p, _ := id.Profile.normalized()
	got, _, err := Parse(id.Verbatim, p)
	if err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			for _, pr := range ve.Problems {
				c.fail(FieldVerbatim, string(pr.Field)+": "+pr.Message, pr.Fix)
			}
			return
		}
		c.fail(FieldVerbatim, err.Error(), "set Identity.Verbatim to a valid User-Agent, or leave it empty")
		return
	}
	want := id
	want.Profile, want.Verbatim, want.UserToken = p, "", ""
	if id.Profile == FAU {
		want.Token = ""
	}
	got.Verbatim, got.UserToken = "", ""
	if got != want {
		c.fail(FieldVerbatim, fmt.Sprintf("the User-Agent %q does not match the other fields (it reads as %s)", id.Verbatim, got.canonical(got.CrawlToken())),
			"leave Identity.Verbatim empty so the User-Agent is generated from the fields, or use identity.Parse")
	}
}

// length refuses an identity whose User-Agent, or the user-triggered User-Agent derived from it,
// is longer than MaxUserAgentLen.
func (c *checker) length(id Identity) {
	if n := len(id.UserAgent()); n > MaxUserAgentLen {
		c.tooLong("the User-Agent", n)
	} else if n := len(id.UserTriggeredAgent()); n > MaxUserAgentLen {
		c.tooLong("the user-triggered User-Agent ("+id.UserTriggeredToken()+"/…)", n)
	}
}

func (c *checker) tooLong(what string, n int) {
	c.fail(FieldUserAgent, fmt.Sprintf("%s is %d bytes, more than the %d this package sends: servers answer an oversized header with 400 or 431, "+
		"and a 4xx answer for robots.txt reads as \"no robots.txt\", which allows everything (RFC 9309 §2.3.1.3)", what, n, MaxUserAgentLen),
		"keep the User-Agent to the token, version, info URL and contact, and put everything else on the info page")
}

func isAlpha(b byte) bool     { return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' }
func isDigit(b byte) bool     { return '0' <= b && b <= '9' }
func isTokenChar(b byte) bool { return isAlpha(b) || b == '_' || b == '-' }
func isTchar(b byte) bool {
	return isAlpha(b) || isDigit(b) || strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

// badChars describes the bytes of s that ok rejects, e.g. `' ' and '.'`, or "" when none.
func badChars(s string, ok func(byte) bool) string {
	var seen []string
	for i := 0; i < len(s); i++ {
		b := s[i]
		if ok(b) {
			continue
		}
		var d string
		switch {
		case b == ' ':
			d = "a space"
		case b == '\t':
			d = "a tab"
		case b < ' ' || b == 0x7f:
			d = fmt.Sprintf("a control character (0x%02x)", b)
		case b >= 0x80:
			d = "non-ASCII characters"
		default:
			d = fmt.Sprintf("'%c'", b)
		}
		dup := false
		for _, s := range seen {
			dup = dup || s == d
		}
		if !dup {
			seen = append(seen, d)
		}
	}
	switch len(seen) {
	case 0:
		return ""
	case 1:
		return seen[0]
	}
	return strings.Join(seen[:len(seen)-1], ", ") + " and " + seen[len(seen)-1]
}

// suggestToken turns s into something RFC 9309 accepts, for use in a fix: spaces and other
// characters become '-', digits are dropped. It may return "ExampleBot" when nothing is left.
func suggestToken(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case isTokenChar(ch):
			b.WriteByte(ch)
		case isDigit(ch):
		default:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
				b.WriteByte('-')
			}
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		return "ExampleBot"
	}
	return out
}
