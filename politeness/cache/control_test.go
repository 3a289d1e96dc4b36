package cache

import (
	"bytes"
	"net/http"
	"testing"
	"time"
)

func TestParseCacheControl(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		name  string
		want  string
		ok    bool // whether a valid delta-seconds is expected from seconds(name)
		secs  time.Duration
	}{
		{[]string{"max-age=60"}, "max-age", "60", true, time.Minute},
		{[]string{"MAX-AGE=60"}, "max-age", "60", true, time.Minute},       // names are case-insensitive (§5.2)
		{[]string{"max-age=003600"}, "max-age", "003600", true, time.Hour}, // leading zeros
		{[]string{`max-age="60"`}, "max-age", "60", true, time.Minute},     // quoted-string argument
		{[]string{"max-age='60'"}, "max-age", "'60'", false, 0},            // single quotes are not quoting
		{[]string{"max-age =60"}, "max-age", "", false, 0},
		{[]string{"max-age= 60"}, "max-age", "", false, 0},
		{[]string{"max-age=60.0"}, "max-age", "60.0", false, 0},
		{[]string{"max-age=-1"}, "max-age", "-1", false, 0},
		{[]string{"max-age=99999999999999"}, "max-age", "99999999999999", true, 2147483648 * time.Second}, // §1.2.2 cap
		{[]string{"max-age=10, max-age=20"}, "max-age", "10", true, 10 * time.Second},                     // first wins (§4.2.1)
		{[]string{"max-age=10", "max-age=20"}, "max-age", "10", true, 10 * time.Second},
		{[]string{`foo="max-age=99, x", max-age=5`}, "max-age", "5", true, 5 * time.Second}, // commas inside quotes
		{[]string{`no-cache="Set-Cookie, X-A"`}, "no-cache", "Set-Cookie, X-A", false, 0},
		{[]string{` , ,no-store ,`}, "no-store", "", false, 0},
	} {
		d := parseCacheControl(tc.lines)
		if got := d[tc.name]; got != tc.want {
			t.Errorf("%q: %s = %q, want %q", tc.lines, tc.name, got, tc.want)
		}
		secs, ok := d.seconds(tc.name)
		if ok != tc.ok || secs != tc.secs {
			t.Errorf("%q: seconds(%s) = %v %v, want %v %v", tc.lines, tc.name, secs, ok, tc.secs, tc.ok)
		}
	}
}

func TestParseAge(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  time.Duration
		ok    bool
	}{
		{[]string{"30"}, 30 * time.Second, true},
		{[]string{"0, old"}, 0, true},
		{[]string{"old, 0"}, 0, false},
		{[]string{"-1"}, 0, false},
		{[]string{"1.5"}, 0, false},
		{[]string{"2147483649"}, 2147483648 * time.Second, true},
		{[]string{"7", "9"}, 7 * time.Second, true}, // the first line counts
	} {
		got, ok := parseAge(http.Header{"Age": tc.lines})
		if got != tc.want || ok != tc.ok {
			t.Errorf("Age %q = %v %v, want %v %v", tc.lines, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseHTTPDate(t *testing.T) {
	want := time.Date(1994, 11, 6, 8, 49, 37, 0, time.UTC)
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"Sun, 06 Nov 1994 08:49:37 GMT", true},  // IMF-fixdate
		{"Sunday, 06-Nov-94 08:49:37 GMT", true}, // RFC 850
		{"Sun Nov  6 08:49:37 1994", true},       // asctime
		{"sun, 06 nov 1994 08:49:37 gmt", true},  // case slips carry no ambiguity
		{"Sun, 06 Nov 1994 08:49:37 UTC", false},
		{"Sun, 06 Nov 1994 08:49:37 +1000", false},
		{"Sun, 06 Nov 94 08:49:37 GMT", false},
		{"Sun 06 Nov 1994 08:49:37 GMT", false},
		{"Sun, 06  Nov 1994 08:49:37 GMT", false},
		{"Sun, 06-Nov-1994 08:49:37 GMT", false},
		{"Sun, 06 Nov 1994 08.49.37 GMT", false},
		{"Sun, 06 Nov 1994 8:49:37 GMT", false},
		{"", false},
	} {
		got, ok := parseHTTPDate(tc.in)
		if ok != tc.ok || (ok && !got.Equal(want)) {
			t.Errorf("%q = %v %v, want ok=%v", tc.in, got, ok, tc.ok)
		}
	}
}

func TestVaryFields(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		names []string
		star  bool
	}{
		{[]string{"accept-language, Accept"}, []string{"Accept-Language", "Accept"}, false},
		{[]string{", *"}, nil, true},
		{[]string{"Foo", "*"}, []string{"Foo"}, true},
		{[]string{"foo, FOO"}, []string{"Foo"}, false},
	} {
		names, star := varyFields(http.Header{"Vary": tc.lines})
		if star != tc.star || len(names) != len(tc.names) {
			t.Errorf("Vary %q = %v %v, want %v %v", tc.lines, names, star, tc.names, tc.star)
			continue
		}
		for i := range names {
			if names[i] != tc.names[i] {
				t.Errorf("Vary %q = %v, want %v", tc.lines, names, tc.names)
			}
		}
	}
}

// FuzzCacheControl checks the Cache-Control parser on any input: no panic, arguments of
// delta-seconds directives within [0, 2^31] seconds, and members with valid names only.
func FuzzCacheControl(f *testing.F) {
	for _, s := range []string{"max-age=60", `no-cache="a, b", max-age="3"`, "max-age=99999999999999999999",
		`x="\"`, `"`, ",,,", "max-age =1", "MUST-REVALIDATE, stale-if-error=5", "a=b=c", `a="\\\""`} {
		f.Add(s, "")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		d := parseCacheControl([]string{a, b})
		for name := range d {
			if !isToken(name) {
				t.Fatalf("directive name %q is not a token", name)
			}
			if s, ok := d.seconds(name); ok && (s < 0 || s > maxDelta*time.Second) {
				t.Fatalf("%s = %v out of range", name, s)
			}
			_ = d.fields(name)
		}
		splitList(a)
		parseAge(http.Header{"Age": {a, b}})
		varyFields(http.Header{"Vary": {a}})
	})
}

// FuzzHTTPDate checks that a date the parser accepts survives a round trip through IMF-fixdate.
func FuzzHTTPDate(f *testing.F) {
	for _, s := range []string{"Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
		"Sun Nov  6 08:49:37 1994", "Mon, 31 Feb 2026 25:61:61 GMT", "sun, 06 nov 1994 08:49:37 gmt"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := parseHTTPDate(s)
		if !ok {
			return
		}
		back, ok := parseHTTPDate(d.Format(http.TimeFormat))
		if !ok || !back.Equal(d) {
			t.Fatalf("%q parsed as %v, which does not round-trip (%v %v)", s, d, back, ok)
		}
	})
}

// FuzzRecord feeds arbitrary bytes to the record decoder the disk store and the httpcache adapter
// use: it must reject or accept, never panic, and an accepted record must be self-consistent.
func FuzzRecord(f *testing.F) {
	meta, _ := encodeMeta("k", &Entry{Status: 200, Header: http.Header{"A": {"b"}}})
	good := append([]byte("body"), meta...)
	good = append(good, encodeTrailer(4, crc32c([]byte("body")), meta)...)
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0xff}, trailerLen))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, body, err := decodeRecord(b, "k")
		if err != nil {
			return
		}
		if e.Key != "k" || e.Size != int64(len(body)) {
			t.Fatalf("accepted an inconsistent record: key %q size %d body %d", e.Key, e.Size, len(body))
		}
	})
}
