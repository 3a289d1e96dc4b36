package identity

import (
	"fmt"
	"strings"
)

// collyDefault is the User-Agent Colly v2 sends when nobody configures one.
const collyDefault = "colly - https://github.com/gocolly/colly"

// Parse reads a whole User-Agent string under profile p ("" means Generic) and returns the
// identity it states, the warnings, and an error. The error is [ErrNoIdentity] for an empty
// string, otherwise a [*ValidationError] listing every problem (structure and parts alike); on
// error the Identity is zero.
//
// The identity's parts are what the string says; when the string is not the canonical form of
// those parts (the Mozilla/5.0 (compatible; …) form, FAU's legacy "; mailto:", extra comment
// text or trailing products) it is kept in Identity.Verbatim so that exactly the configured
// string is sent. For every string Parse accepts, Parse(id.UserAgent(), p) returns id again.
// Leading and trailing blanks are ignored. A User-Agent cannot carry a user token, so
// Identity.UserToken is always empty. A string longer than [MaxUserAgentLen] bytes is refused
// unread, and so is one whose user-triggered form ([Identity.UserTriggeredAgent]) would be.
//
// Generic accepts Token/Version, then optionally a comment whose ';'-separated elements give
// the info URL ("+URL", or a bare http(s) URL), the contact ("mailto:EMAIL" or a bare address)
// and free text, then optionally further products and comments, such as the library in use
// (ExampleBot/1.0 (+https://example.org/bot) colly/2.3.0). It also accepts
// Mozilla/<v> (compatible; Token/Version; +URL[; mailto:EMAIL]), where the first element of
// the form name/version after "compatible" is the bot's product. A browser's product anywhere
// at top level (Mozilla without "compatible", AppleWebKit, Gecko, Chrome, Safari, …) rejects the
// string as a disguise.
//
// FAU accepts exactly FAU-<ORG>-<BOT>/<VERSION> (+<INFO-URL>;mailto:<CONTACT>), also with one
// space between ';' and "mailto:" (the legacy separator), and nothing else: no Mozilla/ prefix,
// no further products or comments. ORG is the part between the first and the second '-' after
// FAU; BOT is the rest, which may contain '-'.
func Parse(ua string, p Profile) (Identity, []Problem, error) {
	prof, ok := p.normalized()
	if !ok {
		var c checker
		c.fields(Identity{Profile: p})
		return Identity{}, nil, c.err()
	}
	s := strings.Trim(ua, " \t")
	if s == "" {
		return Identity{}, nil, ErrNoIdentity
	}
	var c checker
	if len(s) > MaxUserAgentLen {
		// Refused before parsing, so that a huge string costs no more than its length.
		c.tooLong("the User-Agent", len(s))
		return Identity{}, nil, c.err()
	}
	if bad := badChars(s, func(b byte) bool { return b >= ' ' && b < 0x7f }); bad != "" {
		// Control characters could split the header; RFC 9110 §5.5 leaves non-ASCII as opaque
		// obs-text. Neither can be part of any token, URL or address we accept.
		c.fail(FieldUserAgent, "the User-Agent contains "+bad+", which an HTTP header value must not carry",
			"remove them; percent-encode non-ASCII characters in the info URL")
		return Identity{}, nil, c.err()
	}
	if strings.EqualFold(s, collyDefault) {
		c.fail(FieldUserAgent, "this is Colly's default User-Agent, sent when no identity is configured",
			"configure your own identity, e.g. ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org)")
		return Identity{}, nil, c.err()
	}
	id := Identity{Profile: prof}
	if prof == FAU {
		c.parseFAU(s, &id)
	} else {
		c.parseGeneric(s, &id)
	}
	c.fields(id)
	if len(c.errs) > 0 {
		return Identity{}, c.warns, c.err()
	}
	if s != id.canonical(id.CrawlToken()) {
		id.Verbatim = s
	}
	if c.length(id); len(c.errs) > 0 {
		return Identity{}, c.warns, c.err()
	}
	return id, c.warns, nil
}

// parseFAU splits an FAU User-Agent into its parts, reporting structural problems; the parts
// are checked afterwards by fauFields.
func (c *checker) parseFAU(s string, id *Identity) {
	if strings.HasPrefix(strings.ToLower(s), "mozilla/") {
		c.fail(FieldUserAgent, "the User-Agent starts with Mozilla/, which the RRZE rules forbid (a crawler must not pass for a browser)",
			"send FAU-<ORG>-<BOT>/<VERSION> (+<INFO-URL>;mailto:<CONTACT>), e.g. FAU-RRZE-Legalcheck/1.0 (+https://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)")
		c.skipField(FieldOrg, FieldBot, FieldVersion, FieldInfoURL, FieldContact)
		return
	}
	head, tail := s, ""
	if i := strings.IndexByte(s, '('); i >= 0 {
		head, tail = s[:i], s[i:]
		if !strings.HasSuffix(head, " ") || strings.HasSuffix(head, "  ") {
			c.fail(FieldUserAgent, "the version must be followed by exactly one space and then (",
				"write FAU-<ORG>-<BOT>/<VERSION> (+<INFO-URL>;mailto:<CONTACT>)")
		}
		head = strings.TrimRight(head, " ")
	}
	name, version, _ := strings.Cut(head, "/")
	id.Version = version
	if org, bot, ok := c.fauName(FieldUserAgent, name); ok {
		id.Org, id.Bot = org, bot
	} else {
		c.skipField(FieldOrg, FieldBot)
	}
	if tail == "" {
		return // fauFields reports the missing info URL and contact
	}
	inner, ok := strings.CutPrefix(tail, "(")
	if inner, ok = strings.CutSuffix(inner, ")"); !ok || strings.ContainsAny(inner, "()") {
		c.fail(FieldUserAgent, "the User-Agent must end with one comment (+<INFO-URL>;mailto:<CONTACT>) and nothing after it",
			"write FAU-<ORG>-<BOT>/<VERSION> (+<INFO-URL>;mailto:<CONTACT>)")
		c.skipField(FieldInfoURL, FieldContact)
		return
	}
	urlPart, contactPart, hasContact := strings.Cut(inner, ";")
	if u, ok := strings.CutPrefix(urlPart, "+"); ok {
		id.InfoURL = u
	} else {
		id.InfoURL = urlPart
		c.fail(FieldUserAgent, "the info URL must be written +<INFO-URL>", "put a + right after the (")
	}
	if !hasContact {
		return
	}
	switch {
	case strings.HasPrefix(contactPart, "mailto:"):
		id.Contact = contactPart[len("mailto:"):]
	case strings.HasPrefix(contactPart, " mailto:"): // the legacy separator "; mailto:"
		id.Contact = contactPart[len(" mailto:"):]
	default:
		c.fail(FieldUserAgent, fmt.Sprintf("the contact %q must be written mailto:<CONTACT> right after ';' (or after one space)", contactPart),
			"write ;mailto:<CONTACT>, e.g. ;mailto:webmaster@fau.de")
		c.skipField(FieldContact)
	}
}

// fauName splits the product token FAU-<ORG>-<BOT> into ORG and BOT, reporting on field a name
// that lacks the FAU- prefix or one of the two parts. ORG is the part between the first and the
// second '-' after FAU; BOT is the rest, which may contain '-'.
func (c *checker) fauName(field Field, name string) (org, bot string, ok bool) {
	rest, ok := strings.CutPrefix(name, "FAU-")
	switch {
	case !ok:
		msg := fmt.Sprintf("the product %q does not start with FAU-: a FAU crawler is named FAU-<ORG>-<BOT>", name)
		if kind, what := classifyName(name); kind == techName {
			msg += fmt.Sprintf(", and %q names a technology (%s), not a crawler", name, what)
		}
		c.fail(field, msg, "name the crawler FAU-<ORG>-<BOT>, e.g. FAU-RRZE-Legalcheck")
		return "", "", false
	case !strings.Contains(rest, "-"):
		c.fail(field, fmt.Sprintf("the product %q has one part after FAU-, but a FAU crawler is named FAU-<ORG>-<BOT>", name),
			"add the organisation and the bot's name, e.g. FAU-RRZE-Legalcheck")
		return "", "", false
	}
	org, bot, _ = strings.Cut(rest, "-")
	return org, bot, true
}

// element is one product (name[/version]) or comment of a User-Agent (RFC 9110 §10.1.5).
type element struct {
	comment       bool
	text          string // a product as written, or a comment's inner text
	name, version string // a product's parts, split at the first '/'
	slash         bool   // the product had a '/'
}

// splitUA splits s into products and comments separated by blanks. Comments nest and honour
// backslash escapes (RFC 9110 §5.6.5). It reports an unterminated comment.
func (c *checker) splitUA(s string) []element {
	var els []element
	for i := 0; i < len(s); {
		switch s[i] {
		case ' ', '\t':
			i++
		case '(':
			depth, j := 0, i
			for ; j < len(s); j++ {
				if s[j] == '\\' {
					j++
					continue
				}
				if s[j] == '(' {
					depth++
				} else if s[j] == ')' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			if j >= len(s) {
				c.fail(FieldUserAgent, "a comment opened with ( is not closed", "add the missing )")
				els = append(els, element{comment: true, text: s[i+1:]})
				return els
			}
			els = append(els, element{comment: true, text: s[i+1 : j]})
			i = j + 1
		default:
			j := i
			for j < len(s) && s[j] != ' ' && s[j] != '\t' && s[j] != '(' {
				j++
			}
			e := element{text: s[i:j]}
			e.name, e.version, e.slash = strings.Cut(e.text, "/")
			els = append(els, e)
			i = j
		}
	}
	return els
}

// parseGeneric reads the generic grammar (see Parse) into id, reporting structural problems.
func (c *checker) parseGeneric(s string, id *Identity) {
	els := c.splitUA(s)
	first := els[0]
	rest := els[1:]
	disguise := Problem{Field: FieldUserAgent,
		Message: "the User-Agent looks like a web browser's: a crawler must say that it is one, and which",
		Fix:     "send Token/Version (+https://info-url; mailto:contact), e.g. ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org), or the RFC 9309 form Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.org/bot)"}
	switch {
	case first.comment:
		c.fail(FieldUserAgent, "the User-Agent starts with a comment, not with the crawler's product Token/Version",
			"start with the product, e.g. ExampleBot/1.0 (+https://example.org/bot)")
		c.skipField(FieldToken, FieldVersion)
		readComment(commentItems(first.text), id)
	case strings.EqualFold(first.name, "mozilla") && len(rest) > 0 && rest[0].comment && isCompatible(rest[0].text):
		items := commentItems(rest[0].text)[1:]
		found := false
		for _, it := range items {
			if strings.Contains(it, "/") && !strings.ContainsAny(it, " :") && !strings.HasPrefix(it, "+") {
				id.Token, id.Version, _ = strings.Cut(it, "/")
				found = true
				break
			}
		}
		if !found {
			c.fail(FieldUserAgent, "Mozilla/5.0 (compatible; …) names no crawler product Token/Version",
				"write Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.org/bot)")
			c.skipField(FieldToken, FieldVersion)
		}
		readComment(items, id)
		rest = rest[1:]
	case browserNames[strings.ToLower(first.name)]:
		c.errs = append(c.errs, disguise)
		c.skipField(FieldToken, FieldVersion, FieldInfoURL, FieldContact)
		return
	default:
		id.Token, id.Version = first.name, first.version
		if !first.slash {
			c.skipField(FieldVersion)
			c.fail(FieldVersion, fmt.Sprintf("the product %q has no version: the User-Agent must start with Token/Version", first.text),
				"append the version, e.g. "+first.text+"/1.0")
		}
		if len(rest) > 0 && rest[0].comment {
			readComment(commentItems(rest[0].text), id)
			rest = rest[1:]
		}
	}
	browser := false
	for _, e := range rest {
		if e.comment {
			continue
		}
		if browserNames[strings.ToLower(e.name)] {
			browser = true
		} else if badChars(e.name, isTchar) != "" || (e.slash && (e.version == "" || badChars(e.version, isTchar) != "")) {
			c.fail(FieldUserAgent, fmt.Sprintf("%q is neither a product (name/version) nor a (comment)", e.text),
				"remove it, or write it as name/version or inside ( )")
		}
	}
	if browser {
		c.errs = append(c.errs, disguise)
	}
}

// isCompatible reports whether a comment starts with the element "compatible".
func isCompatible(comment string) bool {
	items := commentItems(comment)
	return len(items) > 0 && strings.EqualFold(items[0], "compatible")
}

// commentItems splits a comment's text at ';' and trims blanks around each element.
func commentItems(comment string) []string {
	items := strings.Split(comment, ";")
	for i := range items {
		items[i] = strings.Trim(items[i], " \t")
	}
	return items
}

// readComment takes the info URL and contact from a comment's elements: the first "+URL" or
// bare http(s) URL, and the first "mailto:ADDR" or bare address. Other elements are free text.
func readComment(items []string, id *Identity) {
	for _, it := range items {
		lower := strings.ToLower(it)
		switch {
		case it == "":
		case strings.HasPrefix(it, "+"):
			if id.InfoURL == "" {
				id.InfoURL = it[1:]
			}
		case strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://"):
			if id.InfoURL == "" {
				id.InfoURL = it
			}
		case strings.HasPrefix(lower, "mailto:"):
			if id.Contact == "" {
				id.Contact = it[len("mailto:"):]
			}
		case strings.Contains(it, "@") && !strings.ContainsAny(it, " :/"):
			if id.Contact == "" {
				id.Contact = it
			}
		}
	}
}
