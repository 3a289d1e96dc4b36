package freshness

// This file decides which strings are HTTP-dates (RFC 9110 §5.6.7): Date, Expires and
// Last-Modified.

import (
	"net/http"
	"regexp"
	"strings"
	"time"
)

// http.ParseTime converts the three formats, but it is lenient where RFC 9110 §5.6.7 is not:
// time.Parse accepts a one-digit hour and treats a run of spaces as one, and the cache-tests
// suite requires a cache to reject such dates (an Expires it cannot read is already expired,
// RFC 9111 §5.3). So a date is first checked against the grammar, then converted by
// http.ParseTime. Names of days and months and "GMT" are matched case-insensitively (a sender's
// case slip carries no ambiguity); everything else is exact.
var (
	rfc850Date  = regexp.MustCompile(`^(?i:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), [0-9]{2}-(?i:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} (?i:GMT)$`)
	asctimeDate = regexp.MustCompile(`^(?i:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?i:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) ( [0-9]|[0-9]{2}) [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4}$`)
)

// imfShape is IMF-fixdate, the format nearly every server sends, as classes of characters:
// a letter, 0 a digit, anything else itself. Checking it needs no regular expression.
const imfShape = "aaa, 00 aaa 0000 00:00:00 aaa"

// parseDate parses an HTTP-date strictly; ok is false for anything else.
func parseDate(s string) (time.Time, bool) {
	if !isIMFFixdate(s) && !rfc850Date.MatchString(s) && !asctimeDate.MatchString(s) {
		return time.Time{}, false
	}
	t, err := http.ParseTime(s)
	if err != nil {
		// The grammar holds, so only the case of a name (or an impossible value) can be wrong.
		if t, err = http.ParseTime(normaliseCase(s)); err != nil {
			return time.Time{}, false
		}
	}
	return t.UTC(), true
}

// isIMFFixdate checks s against imfShape, and that it ends in GMT.
func isIMFFixdate(s string) bool {
	if len(s) != len(imfShape) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c, want := s[i], imfShape[i]
		switch want {
		case 'a':
			if c|0x20 < 'a' || c|0x20 > 'z' {
				return false
			}
		case '0':
			if c < '0' || c > '9' {
				return false
			}
		default:
			if c != want {
				return false
			}
		}
	}
	return strings.EqualFold(s[len(s)-3:], "GMT")
}

// normaliseCase rewrites day and month names to the capitalisation time.Parse requires, and the
// zone to "GMT".
func normaliseCase(s string) string {
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

// headerDate returns the single date in field name of h; several lines or an invalid date give
// ok false.
func headerDate(h http.Header, name string) (time.Time, bool) {
	v := h.Values(name)
	if len(v) != 1 {
		return time.Time{}, false
	}
	return parseDate(strings.Trim(v[0], " \t"))
}
