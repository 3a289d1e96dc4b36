package etiquettetest_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/etiquettetest"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	home  = "http://127.0.0.1:40001"
	other = "http://127.0.0.1:40002"
	ua    = "ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org)"
)

// req is a recorded request for the rule tables: arrival and answer at milliseconds after t0.
type req struct {
	origin, method, target string
	at, done               int // ms after t0; done < 0: not answered yet
	status                 int
	header, answer         []string // name, value pairs
	remote                 string
	wellKnown              []string
}

func recording(reqs ...req) []etiquettetest.Request {
	var out []etiquettetest.Request
	for _, r := range reqs {
		x := etiquettetest.Request{At: t0.Add(time.Duration(r.at) * time.Millisecond), Origin: r.origin, Method: r.method,
			Target: r.target, Status: r.status, Header: http.Header{}, Answer: http.Header{}, RemoteAddr: r.remote, WellKnown: r.wellKnown}
		if x.Origin == "" {
			x.Origin = home
		}
		if x.Method == "" {
			x.Method = http.MethodGet
		}
		if x.Status == 0 && r.done >= 0 {
			x.Status = 200
		}
		if r.done >= 0 {
			x.Done = t0.Add(time.Duration(max(r.done, r.at)) * time.Millisecond)
		}
		for i := 0; i+1 < len(r.header); i += 2 {
			x.Header.Add(r.header[i], r.header[i+1])
		}
		for i := 0; i+1 < len(r.answer); i += 2 {
			x.Answer.Add(r.answer[i], r.answer[i+1])
		}
		out = append(out, x)
	}
	return out
}

// polite is the identification every request in the tables carries unless a case says otherwise.
func polite(extra ...string) []string {
	return append([]string{"User-Agent", ua, "From", "bot@example.org"}, extra...)
}

func TestRules(t *testing.T) {
	tests := []struct {
		name     string
		rule     etiquettetest.Rule
		reqs     []etiquettetest.Request
		offences []string // the offending targets, in order; nil: the rule is kept
		problem  string   // a substring of the first offence's problem
	}{
		{"identified", etiquettetest.IdentifyEveryRequestAs(ua, "bot@example.org"),
			recording(req{target: "/robots.txt", header: polite()}, req{target: "/", at: 400, header: polite()}), nil, ""},
		{"browser user-agent", etiquettetest.IdentifyEveryRequestAs(ua, "bot@example.org"),
			recording(req{target: "/robots.txt", header: polite()}, req{target: "/", at: 400, header: []string{"User-Agent", "Mozilla/5.0"}}),
			[]string{"/"}, `User-Agent "Mozilla/5.0", From none`},
		{"two user-agents", etiquettetest.IdentifyEveryRequestAs(ua, ""),
			recording(req{target: "/", header: []string{"User-Agent", ua, "User-Agent", "Mozilla/5.0"}}), []string{"/"}, `["`},
		{"from not asked for", etiquettetest.IdentifyEveryRequestAs(ua, ""), recording(req{target: "/", header: []string{"User-Agent", ua}}), nil, ""},

		{"no cookies", etiquettetest.SendNoCookies(), recording(req{target: "/"}), nil, ""},
		{"a cookie", etiquettetest.SendNoCookies(), recording(req{target: "/", header: []string{"Cookie", "_ga=GA1; PHPSESSID=x"}}),
			[]string{"/"}, `Cookie "_ga=GA1; PHPSESSID=x" (not allowed: _ga, PHPSESSID)`},
		{"only the allowed cookie", etiquettetest.SendOnlyCookies("PHPSESSID"), recording(req{target: "/", header: []string{"Cookie", "PHPSESSID=x"}}), nil, ""},
		{"an allowed and a refused cookie", etiquettetest.SendOnlyCookies("PHPSESSID"),
			recording(req{target: "/", header: []string{"Cookie", "PHPSESSID=x; CookieConsent=yes"}}), []string{"/"}, "not allowed: CookieConsent)"},
		{"cookie names are case-sensitive", etiquettetest.SendOnlyCookies("PHPSESSID"), recording(req{target: "/", header: []string{"Cookie", "phpsessid=x"}}),
			[]string{"/"}, "not allowed: phpsessid"},
		{"an unreadable cookie header", etiquettetest.SendOnlyCookies("a"), recording(req{target: "/", header: []string{"Cookie", "=;"}}), []string{"/"}, "(unreadable)"},

		{"robots.txt first on each origin", etiquettetest.FetchRobotsTxtFirst(),
			recording(req{target: "/robots.txt", done: 10}, req{target: "/", at: 400},
				req{origin: other, target: "/robots.txt", at: 500, done: 510}, req{origin: other, target: "/x", at: 900}), nil, ""},
		{"no robots.txt at one origin", etiquettetest.FetchRobotsTxtFirst(),
			recording(req{target: "/robots.txt", done: 10}, req{target: "/", at: 400}, req{origin: other, target: "/x", at: 900}),
			[]string{"/x"}, "robots.txt was never answered at this origin"},
		{"a page while robots.txt is still coming", etiquettetest.FetchRobotsTxtFirst(),
			recording(req{target: "/robots.txt", done: 500}, req{target: "/", at: 100}), []string{"/"}, "arrived before robots.txt was answered (12:00:00.500)"},
		{"a page after a robots.txt redirect hop only", etiquettetest.FetchRobotsTxtFirst(),
			recording(req{target: "/robots.txt", done: 10, status: 301}, req{target: "/", at: 100}, req{target: "/robots.txt?hop=1", at: 200, done: 210, status: 200}),
			[]string{"/"}, "before robots.txt was answered"},
		{"a robots.txt that got no answer", etiquettetest.FetchRobotsTxtFirst(),
			recording(req{target: "/robots.txt", done: -1}, req{target: "/", at: 100}), []string{"/"}, "never answered"},
		{"robots.txt answered 503 counts as fetched", etiquettetest.FetchRobotsTxtFirst(),
			recording(req{target: "/robots.txt", done: 10, status: 503}, req{target: "/", at: 100}), nil, ""},

		{"never requested", etiquettetest.NeverRequest("/private", "/x$"), recording(req{target: "/public"}, req{target: "/x/y"}), nil, ""},
		{"a disallowed prefix", etiquettetest.NeverRequest("/private", "/x$"),
			recording(req{target: "/private/a"}, req{target: "/x"}, req{target: "/privateer?q"}), []string{"/private/a", "/x", "/privateer?q"}, "matches /private"},

		{"three per second", etiquettetest.StartAtMostPerSecond(3),
			recording(req{target: "/1"}, req{target: "/2", at: 350}, req{target: "/3", at: 700}, req{target: "/4", at: 1000}, req{origin: other, target: "/o", at: 10}), nil, ""},
		{"a fourth start inside one second", etiquettetest.StartAtMostPerSecond(3),
			recording(req{target: "/1"}, req{target: "/2", at: 300}, req{target: "/3", at: 600}, req{target: "/4", at: 999}, req{target: "/5", at: 2000}),
			[]string{"/1", "/2", "/3", "/4"}, "start 1 of 4 within one second from 12:00:00.000"},
		{"origins are counted apart", etiquettetest.StartAtMostPerSecond(1),
			recording(req{target: "/1"}, req{origin: other, target: "/2", at: 1}), nil, ""},

		{"two in flight", etiquettetest.KeepAtMostInFlight(2),
			recording(req{target: "/1", done: 500}, req{target: "/2", at: 100, done: 600}, req{target: "/3", at: 500, done: 700}), nil, ""},
		{"a third while two are in flight", etiquettetest.KeepAtMostInFlight(2),
			recording(req{target: "/1", done: 500}, req{target: "/2", at: 100, done: 600}, req{target: "/3", at: 499, done: 700}),
			[]string{"/3"}, "arrived while 2 others were in flight: GET /1 since 12:00:00.000; GET /2 since 12:00:00.100"},
		{"an unanswered request stays in flight", etiquettetest.KeepAtMostInFlight(1),
			recording(req{target: "/hang", done: -1}, req{target: "/2", at: 5000}), []string{"/2"}, "GET /hang"},

		{"waits out Retry-After", etiquettetest.WaitAfterRetryAfter(),
			recording(req{target: "/a", done: 10, status: 429, answer: []string{"Retry-After", "2"}, remote: "c1"},
				req{origin: other, target: "/o", at: 100, remote: "c2"}, req{target: "/a", at: 2010, remote: "c1"}), nil, ""},
		{"returns too early", etiquettetest.WaitAfterRetryAfter(),
			recording(req{target: "/a", done: 10, status: 503, answer: []string{"Retry-After", "2"}, remote: "c1"}, req{target: "/b", at: 1500, remote: "c2"}),
			[]string{"/b"}, `arrived 1.49s after GET /a was answered 503 with Retry-After "2" at 12:00:00.010; the site asked for 2s`},
		{"a request already on its way on another connection", etiquettetest.WaitAfterRetryAfter(),
			recording(req{target: "/a", done: 10, status: 429, answer: []string{"Retry-After", "2"}, remote: "c1"}, req{target: "/b", at: 40, remote: "c2"}), nil, ""},
		{"an immediate retry on the same connection", etiquettetest.WaitAfterRetryAfter(),
			recording(req{target: "/a", done: 10, status: 429, answer: []string{"Retry-After", "2"}, remote: "c1"}, req{target: "/a", at: 12, remote: "c1"}),
			[]string{"/a"}, "arrived 2ms after"},
		{"the end of the pause, within the tolerance", etiquettetest.WaitAfterRetryAfter(),
			recording(req{target: "/a", done: 0, status: 429, answer: []string{"Retry-After", "1"}, remote: "c1"}, req{target: "/b", at: 960, remote: "c1"}), nil, ""},
		{"an HTTP-date", etiquettetest.WaitAfterRetryAfter(),
			recording(req{target: "/a", done: 0, status: 503, answer: []string{"Retry-After", t0.Add(3 * time.Second).Format(http.TimeFormat)}, remote: "c1"},
				req{target: "/b", at: 2500, remote: "c1"}), []string{"/b"}, "the site asked for 3s"},
		{"Retry-After on a 200 asks for nothing", etiquettetest.WaitAfterRetryAfter(),
			recording(req{target: "/a", done: 0, answer: []string{"Retry-After", "5"}, remote: "c1"}, req{target: "/b", at: 100, remote: "c1"}), nil, ""},
		{"a pause at one origin does not hold another", etiquettetest.WaitAfterRetryAfter(),
			recording(req{target: "/a", done: 0, status: 429, answer: []string{"Retry-After", "5"}, remote: "c1"}, req{origin: other, target: "/b", at: 100, remote: "c1"}), nil, ""},

		{"revalidated", etiquettetest.RevalidateWith304(),
			recording(req{target: "/a", status: 304, header: []string{"If-None-Match", `"a1"`}, answer: []string{"ETag", `"a1"`}},
				req{target: "/b", status: 304, header: []string{"If-Modified-Since", "x"}, answer: []string{"Last-Modified", "x"}},
				req{target: "/moved", status: 302, answer: []string{"Location", "/a"}}, req{method: "POST", target: "/form", answer: []string{"ETag", `"f"`}}), nil, ""},
		{"downloaded again", etiquettetest.RevalidateWith304(),
			recording(req{target: "/a", answer: []string{"ETag", `"a1"`}}), []string{"/a"}, `unconditional (no If-None-Match or If-Modified-Since) though the site gives ETag "a1"; answered 200`},
		{"a validator that does not match", etiquettetest.RevalidateWith304(),
			recording(req{target: "/a", header: []string{"If-None-Match", `"old"`}, answer: []string{"ETag", `"a1"`}}), []string{"/a"}, `If-None-Match "\"old\"", If-Modified-Since none did not match ETag "a1"; answered 200`},

		{"a mentioned well-known URL", etiquettetest.ProbeNoWellKnown(),
			recording(req{target: "/", done: 10, wellKnown: []string{home + "/.well-known/security.txt"}}, req{target: "/.well-known/security.txt", at: 400}), nil, ""},
		{"a probe", etiquettetest.ProbeNoWellKnown(),
			recording(req{target: "/", done: 10, wellKnown: []string{home + "/.well-known/security.txt"}}, req{target: "/.well-known/ai-plugin.json", at: 400},
				req{origin: other, target: "/.well-known/security.txt", at: 500}), []string{"/.well-known/ai-plugin.json", "/.well-known/security.txt"}, "a probe"},
		{"a well-known URL before it was mentioned", etiquettetest.ProbeNoWellKnown(),
			recording(req{target: "/.well-known/x"}, req{target: "/", at: 400, wellKnown: []string{home + "/.well-known/x"}}), []string{"/.well-known/x"}, "a probe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.rule.Check(tt.reqs)
			if tt.offences == nil {
				if err != nil {
					t.Fatalf("want the rule kept, got %v", err)
				}
				return
			}
			var v *etiquettetest.ViolationError
			if !errors.As(err, &v) {
				t.Fatalf("want a *ViolationError, got %v", err)
			}
			var got []string
			for _, o := range v.Offences {
				got = append(got, o.Request.Target)
			}
			if strings.Join(got, " ") != strings.Join(tt.offences, " ") {
				t.Errorf("offences %v, want %v\n%v", got, tt.offences, err)
			}
			if !strings.Contains(v.Offences[0].Problem, tt.problem) {
				t.Errorf("problem %q lacks %q", v.Offences[0].Problem, tt.problem)
			}
			if v.Judged != len(tt.reqs) || !strings.Contains(err.Error(), v.Offences[0].String()) {
				t.Errorf("message:\n%v", err)
			}
		})
	}
}

func TestViolationMessageListsRequestsAsALogDoes(t *testing.T) {
	var reqs []req
	for i := range etiquettetest.MaxListed + 3 {
		reqs = append(reqs, req{target: "/p", at: i, header: []string{"Cookie", "_ga=1"}})
	}
	err := etiquettetest.SendNoCookies().Check(recording(reqs...))
	lines := strings.Split(err.Error(), "\n")
	want := []string{
		"expected no request to carry a cookie; broken by 23 of 23 requests:",
		`  12:00:00.000 http://127.0.0.1:40001 GET /p  Cookie "_ga=1" (not allowed: _ga)`,
	}
	if lines[0] != want[0] || lines[1] != want[1] || lines[len(lines)-1] != "  … and 3 more" || len(lines) != etiquettetest.MaxListed+2 {
		t.Errorf("message:\n%v", err)
	}
}

func TestRulesRefuseToJudgeNothingOrBadArguments(t *testing.T) {
	tests := []struct {
		name string
		rule etiquettetest.Rule
		want error
	}{
		{"empty recording", etiquettetest.SendNoCookies(), etiquettetest.ErrNoRequests},
		{"zero rule", etiquettetest.Rule{}, etiquettetest.ErrInvalidRule},
		{"empty user-agent", etiquettetest.IdentifyEveryRequestAs("", "x"), etiquettetest.ErrInvalidRule},
		{"no paths", etiquettetest.NeverRequest(), etiquettetest.ErrInvalidRule},
		{"not a path", etiquettetest.NeverRequest("private"), etiquettetest.ErrInvalidRule},
		{"rate 0", etiquettetest.StartAtMostPerSecond(0), etiquettetest.ErrInvalidRule},
		{"in flight 0", etiquettetest.KeepAtMostInFlight(0), etiquettetest.ErrInvalidRule},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reqs := recording(req{target: "/"})
			if tt.want == etiquettetest.ErrNoRequests {
				reqs = nil
			}
			if err := tt.rule.Check(reqs); !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
}

// fakeT records what Verify reports.
type fakeT struct{ errors []string }

func (f *fakeT) Helper()                           {}
func (f *fakeT) Errorf(format string, args ...any) { f.errors = append(f.errors, format) }

func TestVerifyReportsEachBrokenRule(t *testing.T) {
	ft := &fakeT{}
	reqs := recording(req{target: "/", header: []string{"Cookie", "a=1"}})
	kept := etiquettetest.Verify(ft, reqs, etiquettetest.SendNoCookies(), etiquettetest.NeverRequest("/"), etiquettetest.KeepAtMostInFlight(1))
	if kept || len(ft.errors) != 2 {
		t.Errorf("kept %v, reports %v; want two", kept, ft.errors)
	}
}
