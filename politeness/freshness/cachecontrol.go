package freshness

// This file decides what a Cache-Control field says (RFC 9111 §5.2), and the list syntax it shares
// with Vary and Connection (RFC 9110 §5.6.1).

import (
	"net/http"
	"strings"
	"time"
)

// MaxDelta is the largest delta-seconds a cache must handle; larger values are replaced by it
// (RFC 9111 §1.2.2: "a cache... MUST use 2147483648 (2^31)").
const MaxDelta = 2147483648

// Directives is a parsed Cache-Control field: lower-cased directive names to their unquoted
// argument, "" for a directive without one. The first occurrence of a directive wins (RFC 9111
// §4.2.1 lets a cache use the first). A nil Directives is empty.
type Directives map[string]string

// CacheControl parses every line of h's Cache-Control field. Pragma is not read: RFC 9111 §5.4
// deprecates it.
func CacheControl(h http.Header) Directives {
	return parseDirectives(h.Values("Cache-Control"))
}

// parseDirectives parses the lines of a Cache-Control field. Members that are not valid
// `token [ "=" ( token / quoted-string ) ]` (RFC 9111 §5.2) are ignored, never guessed at: a
// space before or after "=" or a single-quoted value makes the directive invalid.
func parseDirectives(lines []string) Directives {
	var d Directives
	for _, line := range lines {
		for _, member := range SplitList(line) {
			name, value, ok := parseDirective(member)
			if !ok {
				continue
			}
			if d == nil {
				d = Directives{}
			}
			if _, seen := d[name]; !seen {
				d[name] = value
			}
		}
	}
	return d
}

// Has reports whether the directive name (lower case) is present.
func (d Directives) Has(name string) bool {
	_, ok := d[name]
	return ok
}

// Seconds returns the delta-seconds argument of name (RFC 9111 §1.2.2): digits only, capped at
// 2^31. ok is false when the directive is absent or its argument is not delta-seconds.
func (d Directives) Seconds(name string) (time.Duration, bool) {
	v, present := d[name]
	if !present {
		return 0, false
	}
	return parseDelta(v)
}

// Fields returns the field-name list argument of a qualified directive such as
// no-cache="Foo, Bar" (RFC 9111 §5.2.2.4), canonicalised; nil when the directive has no argument.
func (d Directives) Fields(name string) []string {
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
func parseDelta(s string) (time.Duration, bool) {
	if s == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n < MaxDelta {
			n = n*10 + int64(c-'0')
		}
	}
	return time.Duration(min(n, MaxDelta)) * time.Second, true
}

// SplitList splits a comma-separated field value at commas outside quoted strings and trims the
// optional whitespace around each member; empty members are dropped (RFC 9110 §5.6.1).
func SplitList(s string) []string {
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
	if start < len(s) {
		if m := strings.Trim(s[start:], " \t"); m != "" {
			out = append(out, m)
		}
	}
	return out
}

// parseDirective parses one list member as token [ "=" ( token / quoted-string ) ].
func parseDirective(m string) (name, value string, ok bool) {
	name, value, hasValue := strings.Cut(m, "=")
	if !isToken(name) {
		return "", "", false
	}
	name = lower(name)
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

// lower is strings.ToLower for a token, without allocating for one already in lower case (the
// usual spelling of directives).
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
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
