package freshness

import (
	"net/http"
	"testing"
	"time"
)

func TestParseDirectives(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		name  string
		want  string
		ok    bool // whether a valid delta-seconds is expected from Seconds(name)
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
		{[]string{"max-age=99999999999999"}, "max-age", "99999999999999", true, MaxDelta * time.Second}, // §1.2.2 cap
		{[]string{"max-age=10, max-age=20"}, "max-age", "10", true, 10 * time.Second},                   // first wins (§4.2.1)
		{[]string{"max-age=10", "max-age=20"}, "max-age", "10", true, 10 * time.Second},
		{[]string{`foo="max-age=99, x", max-age=5`}, "max-age", "5", true, 5 * time.Second}, // commas inside quotes
		{[]string{`no-cache="Set-Cookie, X-A"`}, "no-cache", "Set-Cookie, X-A", false, 0},
		{[]string{` , ,no-store ,`}, "no-store", "", false, 0},
	} {
		d := parseDirectives(tc.lines)
		if got := d[tc.name]; got != tc.want {
			t.Errorf("%q: %s = %q, want %q", tc.lines, tc.name, got, tc.want)
		}
		secs, ok := d.Seconds(tc.name)
		if ok != tc.ok || secs != tc.secs {
			t.Errorf("%q: Seconds(%s) = %v %v, want %v %v", tc.lines, tc.name, secs, ok, tc.secs, tc.ok)
		}
	}
	if got := parseDirectives([]string{`no-cache="set-cookie, , x-a"`}).Fields("no-cache"); len(got) != 2 || got[0] != "Set-Cookie" || got[1] != "X-A" {
		t.Errorf("Fields(no-cache) = %q, want [Set-Cookie X-A]", got)
	}
}

func TestAgeValue(t *testing.T) {
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
		{[]string{"2147483649"}, MaxDelta * time.Second, true},
		{[]string{"7", "9"}, 7 * time.Second, true}, // the first line counts
	} {
		got, ok := ageValue(http.Header{"Age": tc.lines})
		if got != tc.want || ok != tc.ok {
			t.Errorf("Age %q = %v %v, want %v %v", tc.lines, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseDate(t *testing.T) {
	want := time.Date(1994, 11, 6, 8, 49, 37, 0, time.UTC)
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"Sun, 06 Nov 1994 08:49:37 GMT", true},  // IMF-fixdate
		{"Sunday, 06-Nov-94 08:49:37 GMT", true}, // RFC 850
		{"Sun Nov  6 08:49:37 1994", true},       // asctime
		{"sun, 06 nov 1994 08:49:37 gmt", true},  // case slips carry no ambiguity
		{"SUN, 06 NOV 1994 08:49:37 GMT", true},
		{"Sun, 06 Nov 1994 08:49:37 UTC", false},
		{"Sun, 06 Nov 1994 08:49:37 +1000", false},
		{"Sun, 06 Nov 94 08:49:37 GMT", false},
		{"Sun 06 Nov 1994 08:49:37 GMT", false},
		{"Sun, 06  Nov 1994 08:49:37 GMT", false},
		{"Sun, 06 Nov 1994  8:49:37 GMT", false}, // IMF-fixdate's length, but a one-digit hour
		{"Sun, 06-Nov-1994 08:49:37 GMT", false},
		{"Sun, 06 Nov 1994 08.49.37 GMT", false},
		{"Sun, 06 Nov 1994 8:49:37 GMT", false},
		{"Sun, 31 Nov 1994 08:49:37 GMT", false}, // no such day
		{"", false},
	} {
		got, ok := parseDate(tc.in)
		if ok != tc.ok || (ok && !got.Equal(want)) {
			t.Errorf("%q = %v %v, want ok=%v", tc.in, got, ok, tc.ok)
		}
	}
}

func TestLifetime(t *testing.T) {
	const date = "Sun, 01 Mar 2026 12:00:00 GMT"
	heuristic := Heuristic{Fraction: 0.1, Max: 24 * time.Hour}
	for _, tc := range []struct {
		name     string
		status   int
		header   http.Header
		want     time.Duration
		explicit bool
	}{
		{"max-age", 200, http.Header{"Cache-Control": {"max-age=60"}}, time.Minute, true},
		{"max-age wins over Expires", 200, http.Header{"Cache-Control": {"max-age=60"}, "Date": {date}, "Expires": {"Sun, 01 Mar 2026 13:00:00 GMT"}}, time.Minute, true},
		{"invalid max-age is stale", 200, http.Header{"Cache-Control": {"max-age=1.5"}}, 0, true},
		{"Expires − Date", 200, http.Header{"Date": {date}, "Expires": {"Sun, 01 Mar 2026 15:00:00 GMT"}}, 3 * time.Hour, true},
		{"Expires in the past", 200, http.Header{"Date": {date}, "Expires": {"Sun, 01 Mar 2026 11:00:00 GMT"}}, 0, true},
		{"invalid Expires", 200, http.Header{"Expires": {"0"}}, 0, true},
		{"heuristic: 10 % since Last-Modified", 200, http.Header{"Date": {date}, "Last-Modified": {"Sun, 01 Mar 2026 02:00:00 GMT"}}, time.Hour, false},
		{"heuristic capped", 200, http.Header{"Date": {date}, "Last-Modified": {"Sun, 01 Mar 2020 12:00:00 GMT"}}, 24 * time.Hour, false},
		{"no heuristic for a 500", 500, http.Header{"Date": {date}, "Last-Modified": {"Sun, 01 Mar 2026 02:00:00 GMT"}}, 0, false},
		{"nothing said", 200, http.Header{}, 0, false},
	} {
		r := Response{Status: tc.status, Header: tc.header}
		if got := r.Lifetime(nil, heuristic); got != tc.want {
			t.Errorf("%s: Lifetime = %v, want %v", tc.name, got, tc.want)
		}
		if got := r.Explicit(nil); got != tc.explicit {
			t.Errorf("%s: Explicit = %v, want %v", tc.name, got, tc.explicit)
		}
	}
}

func TestAge(t *testing.T) {
	sent := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		header   http.Header
		received time.Time
		now      time.Time
		want     time.Duration
	}{
		{"just received", http.Header{"Date": {"Sun, 01 Mar 2026 12:00:00 GMT"}}, sent, sent, 0},
		{"resident for a minute", http.Header{}, sent, sent.Add(time.Minute), time.Minute},
		{"Age plus the response delay", http.Header{"Age": {"100"}}, sent.Add(2 * time.Second), sent.Add(2 * time.Second), 102 * time.Second},
		{"apparent age from an old Date", http.Header{"Date": {"Sun, 01 Mar 2026 11:00:00 GMT"}}, sent, sent, time.Hour},
		{"a Date in the future counts as 0", http.Header{"Date": {"Sun, 01 Mar 2026 13:00:00 GMT"}}, sent, sent, 0},
	} {
		r := Response{Status: 200, Header: tc.header, RequestTime: sent, ResponseTime: tc.received}
		if got := r.Age(tc.now); got != tc.want {
			t.Errorf("%s: Age = %v, want %v", tc.name, got, tc.want)
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
		d := parseDirectives([]string{a, b})
		for name := range d {
			if !isToken(name) {
				t.Fatalf("directive name %q is not a token", name)
			}
			if s, ok := d.Seconds(name); ok && (s < 0 || s > MaxDelta*time.Second) {
				t.Fatalf("%s = %v out of range", name, s)
			}
			_ = d.Fields(name)
		}
		ageValue(http.Header{"Age": {a, b}})
	})
}

// FuzzHTTPDate checks that a date the parser accepts survives a round trip through IMF-fixdate.
func FuzzHTTPDate(f *testing.F) {
	for _, s := range []string{"Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
		"Sun Nov  6 08:49:37 1994", "Mon, 31 Feb 2026 25:61:61 GMT", "sun, 06 nov 1994 08:49:37 gmt",
		"Sun, 06 Nov 1994  8:49:37 GMT"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := parseDate(s)
		if !ok {
			return
		}
		back, ok := parseDate(d.Format(http.TimeFormat))
		if !ok || !back.Equal(d) {
			t.Fatalf("%q parsed as %v, which does not round-trip (%v %v)", s, d, back, ok)
		}
	})
}
