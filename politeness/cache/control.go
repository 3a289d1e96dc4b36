package cache

import (
	"net/http"
	"regexp"
	"strings"
	"time"
)

// This file parses the header fields the cache decides on: Cache-Control (RFC 9111 §5.2), Age
// (§5.1), Expires and Date (§5.3, RFC 9110 §5.6.7) and Vary (RFC 9110 §12.5.5). Go's standard
// library parses none of them for caching purposes, and gregjones/httpcache's parsers are the
// source of several conformance failures (quoted strings, case, duplicates, lenient dates), so the
// cache owns these few small parsers.

// maxDelta is the largest delta-seconds a cache must handle; larger values are replaced by it
// (RFC 9111 §1.2.2: "a cache... MUST use 2147483648 (2^31)").
const maxDelta = 2147483648

// directives is a parsed Cache-Control field: lower-cased directive names to their (unquoted)
// argument, "" for a directive without one. The first occurrence of a directive wins (RFC 9111
// §4.2.1 lets a cache use the first occurrence).
type directives map[string]string

// parseCacheControl parses every line of a Cache-Control field. Members that are not valid
// `token [ "=" ( token / quoted-string ) ]` (RFC 9111 §5.2) are ignored, never guessed at: a space
// before or after "=" or a single-quoted value makes the directive invalid.
func parseCacheControl(lines []string) directives {
	d := directives{}
	for _, line := range lines {
		for _, member := range splitList(line) {
			name, value, ok := parseDirective(member)
			if !ok {
				continue
			}
			if _, seen := d[name]; !seen {
				d[name] = value
			}
		}
	}
	return d
}

func (d directives) has(name string) bool {
	_, ok := d[name]
	return ok
}

// seconds returns the delta-seconds argument of name (RFC 9111 §1.2.2): digits only, capped at
// 2^31. ok is false when the directive is absent or its argument is not delta-seconds.
func (d directives) seconds(name string) (time.Duration, bool) {
	v, present := d[name]
	if !present {
		return 0, false
	}
	n, ok := parseDelta(v)
	if !ok {
		return 0, false
	}
	return time.Duration(n) * time.Second, true
}

// fields returns the field-name list argument of a qualified directive such as no-cache="Foo, Bar"
// (RFC 9111 §5.2.2.4), canonicalised; nil when the directive has no argument.
func (d directives) fields(name string) []string {
	v := d[name]
	if v == "" {
		return nil
	}
	var out []string
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, http.CanonicalHeaderKey(f))
		}
	}
	return out
}

// parseDelta parses delta-seconds: 1*DIGIT, saturating at 2^31.
func parseDelta(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n < maxDelta {
			n = n*10 + int64(c-'0')
		}
	}
	return min(n, maxDelta), true
}

// splitList splits a comma-separated field value at commas outside quoted strings and trims the
// optional whitespace around each member; empty members are dropped (RFC 9110 §5.6.1).
func splitList(s string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case c == ',' && !quoted:
			if m := strings.Trim(s[start:i], " \t"); m != "" {
				out = append(out, m)
			}
			start = i + 1
		}
	}
	if m := strings.Trim(s[start:], " \t"); m != "" {
		out = append(out, m)
	}
	return out
}

// parseDirective parses one list member as token [ "=" ( token / quoted-string ) ].
func parseDirective(m string) (name, value string, ok bool) {
	name, value, hasValue := strings.Cut(m, "=")
	if !isToken(name) {
		return "", "", false
	}
	name = strings.ToLower(name)
	if !hasValue {
		return name, "", true
	}
	if strings.HasPrefix(value, `"`) {
		v, ok := unquote(value)
		return name, v, ok
	}
	if !isToken(value) {
		return "", "", false
	}
	return name, value, true
}

// unquote decodes a quoted-string (RFC 9110 §5.6.4) that must span all of s.
func unquote(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", false
	}
	var b strings.Builder
	for i := 1; i < len(s)-1; i++ {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s)-1 {
				return "", false
			}
			i++
			b.WriteByte(s[i])
		case c == '"':
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// isToken reports whether s is a non-empty RFC 9110 §5.6.2 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// parseAge returns the Age field's value in seconds (RFC 9111 §5.1). Only the first member of the
// first line counts; a value that is not delta-seconds (negative, fractional, alphabetic) is
// ignored, as the suite's age-parse tests expect, and values above 2^31 are capped.
func parseAge(h http.Header) (time.Duration, bool) {
	lines := h.Values("Age")
	if len(lines) == 0 {
		return 0, false
	}
	first, _, _ := strings.Cut(lines[0], ",")
	n, ok := parseDelta(strings.Trim(first, " \t"))
	if !ok {
		return 0, false
	}
	return time.Duration(n) * time.Second, true
}

var (
	// IMF-fixdate, RFC 850 and asctime, the three formats of RFC 9110 §5.6.7. Names of days and
	// months are matched case-insensitively (the suite's "wrong case" tests are optimal, and a
	// sender's case slip carries no ambiguity); everything else is exact: a recipient that
	// accepted "UTC", a one-digit hour or a doubled space could not tell a date from garbage.
	imfFixdate  = regexp.MustCompile(`^(?i:Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2} (?i:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} (?i:GMT)$`)
	rfc850Date  = regexp.MustCompile(`^(?i:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), [0-9]{2}-(?i:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} (?i:GMT)$`)
	asctimeDate = regexp.MustCompile(`^(?i:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?i:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ( [0-9]|[0-9]{2}) [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4}$`)
)

// imfLayout is IMF-fixdate with "GMT" as a literal, so time.Parse builds no time zone.
const imfLayout = "Mon, 02 Jan 2006 15:04:05 GMT"

// parseHTTPDate parses an HTTP-date (RFC 9110 §5.6.7) strictly; ok is false for anything else.
func parseHTTPDate(s string) (time.Time, bool) {
	// Fast path for the format nearly every server sends. The fixed length rules out one-digit
	// fields and doubled spaces, which time.Parse would otherwise accept.
	if len(s) == len(imfLayout) {
		if t, err := time.Parse(imfLayout, s); err == nil {
			return t, true
		}
	}
	var layout string
	switch {
	case imfFixdate.MatchString(s):
		layout = imfLayout
	case rfc850Date.MatchString(s):
		layout = "Monday, 02-Jan-06 15:04:05 GMT"
	case asctimeDate.MatchString(s):
		layout = "Mon Jan _2 15:04:05 2006"
	default:
		return time.Time{}, false
	}
	t, err := time.Parse(layout, normaliseDateCase(s))
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// normaliseDateCase rewrites day and month names to the capitalisation time.Parse requires.
func normaliseDateCase(s string) string {
	b := []byte(strings.ToLower(s))
	up := true
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			if up {
				b[i] = c - 'a' + 'A'
			}
			up = false
		} else {
			up = true
		}
	}
	return strings.Replace(string(b), "Gmt", "GMT", 1)
}

// headerDate returns the single date in field name; several lines or an invalid date give ok false.
func headerDate(h http.Header, name string) (time.Time, bool) {
	v := h.Values(name)
	if len(v) != 1 {
		return time.Time{}, false
	}
	return parseHTTPDate(strings.Trim(v[0], " \t"))
}

// varyFields returns the canonical field names a response's Vary lists, and star when it lists
// "*" (RFC 9110 §12.5.5: such a response never matches a later request).
func varyFields(h http.Header) (names []string, star bool) {
	seen := map[string]bool{}
	for _, line := range h.Values("Vary") {
		for _, m := range splitList(line) {
			if m == "*" {
				star = true
				continue
			}
			n := http.CanonicalHeaderKey(m)
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	return names, star
}

// varyValue is the normalised value of a request field for Vary matching (RFC 9111 §4.1): the
// lines joined with ", " and the whitespace around each member dropped, so that formatting
// differences a server cannot see do not split variants.
func varyValue(h http.Header, name string) string {
	var parts []string
	for _, line := range h.Values(name) {
		parts = append(parts, splitList(line)...)
	}
	return strings.Join(parts, ",")
}
