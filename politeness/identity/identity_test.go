package identity

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

const (
	legalcheckURL = "https://www.rrze.fau.de/bots/legalcheck/"
	legalcheckUA  = "FAU-RRZE-Legalcheck/1.0 (+https://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)"
)

// fields returns the sorted Field names of problems.
func fields(ps []Problem) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, string(p.Field))
	}
	slices.Sort(out)
	return out
}

// problemsOf returns the problems in err, failing the test when err is not a *ValidationError.
func problemsOf(t *testing.T, err error) []Problem {
	t.Helper()
	if err == nil {
		return nil
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("error %v is a %T, want *ValidationError", err, err)
	}
	return ve.Problems
}

// checkExplained fails when a problem lacks a reason or a fix.
func checkExplained(t *testing.T, ps []Problem) {
	t.Helper()
	for _, p := range ps {
		if p.Field == "" || p.Message == "" || p.Fix == "" {
			t.Errorf("problem without field, reason or fix: %#v", p)
		}
	}
}

type parseCase struct {
	name    string
	ua      string
	errs    []string // sorted Field names of the expected errors; nil: valid
	warns   []string // sorted Field names of the expected warnings
	mention string   // a word the error text must contain (the reason that matters)
}

func runParseCases(t *testing.T, p Profile, cases []parseCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, warns, err := Parse(tc.ua, p)
			errs := problemsOf(t, err)
			checkExplained(t, errs)
			checkExplained(t, warns)
			if got := fields(errs); !slices.Equal(got, tc.errs) {
				t.Errorf("Parse(%q) errors on %v, want %v\n%v", tc.ua, got, tc.errs, err)
			}
			if got := fields(warns); !slices.Equal(got, tc.warns) {
				t.Errorf("Parse(%q) warns on %v, want %v\n%v", tc.ua, got, tc.warns, warns)
			}
			if tc.mention != "" && (err == nil || !strings.Contains(err.Error(), tc.mention)) {
				t.Errorf("Parse(%q) error %v does not mention %q", tc.ua, err, tc.mention)
			}
			if err != nil {
				if !id.IsZero() {
					t.Errorf("Parse(%q) failed but returned identity %+v", tc.ua, id)
				}
				return
			}
			if got := id.UserAgent(); got != strings.TrimSpace(tc.ua) {
				t.Errorf("UserAgent() = %q, want the configured %q", got, tc.ua)
			}
			if !strings.Contains(tc.ua, id.CrawlToken()) {
				t.Errorf("crawl token %q is not a substring of %q (RFC 9309 §2.2.1)", id.CrawlToken(), tc.ua)
			}
			if w, err := id.Validate(); err != nil || !slices.Equal(fields(w), tc.warns) {
				t.Errorf("parsed identity %+v does not validate the same: warnings %v, error %v", id, w, err)
			}
		})
	}
}

// TestParseFAU pins the RRZE crawler rules v1.5: every valid example passes with both
// separators, every invalid example fails with a reason per problem.
func TestParseFAU(t *testing.T) {
	runParseCases(t, FAU, []parseCase{
		{name: "rules example", ua: legalcheckUA},
		{name: "legacy separator with one space", ua: "FAU-RRZE-Legalcheck/1.0 (+https://www.rrze.fau.de/bots/legalcheck/; mailto:webmaster@fau.de)"},
		{name: "longer version", ua: "FAU-RRZE-Legalcheck/2.10.3 (+https://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)"},
		{name: "hyphen in bot", ua: "FAU-RRZE-Legal-check/1.0 (+https://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)"},
		{name: "surrounding blanks ignored", ua: "  " + legalcheckUA + "\t"},
		{name: "digits in org warn", ua: "FAU-INF12-Linkcheck/1.0 (+https://www.cs.fau.de/bot;mailto:admin@cs.fau.de)", warns: []string{"Org"}},
		{name: "digits in bot warn", ua: "FAU-RRZE-Legalcheck2/1.0 (+https://www.rrze.fau.de/bot;mailto:webmaster@fau.de)", warns: []string{"Bot"}},
		{name: "generic bot name warns", ua: "FAU-RRZE-Crawler/1.0 (+https://www.rrze.fau.de/bot;mailto:webmaster@fau.de)", warns: []string{"Bot"}},

		{name: "Mozilla/5.0", ua: "Mozilla/5.0", errs: []string{"UserAgent"}, mention: "Mozilla/"},
		{name: "python-requests", ua: "python-requests/2.32", errs: []string{"Contact", "InfoURL", "UserAgent"}, mention: "technology"},
		{name: "curl", ua: "curl/8.0", errs: []string{"Contact", "InfoURL", "UserAgent"}, mention: "FAU-"},
		{name: "Crawler", ua: "Crawler", errs: []string{"Contact", "InfoURL", "UserAgent", "Version"}},
		{name: "FAU-Bot", ua: "FAU-Bot", errs: []string{"Contact", "InfoURL", "UserAgent", "Version"}, mention: "FAU-<ORG>-<BOT>"},
		{name: "no version", ua: "FAU-RRZE-Legalcheck", errs: []string{"Contact", "InfoURL", "Version"}},
		{name: "no comment", ua: "FAU-RRZE-Legalcheck/1.0", errs: []string{"Contact", "InfoURL"}},
		{name: "Mozilla compatible", ua: "Mozilla/5.0 (compatible; FAU-RRZE-Legalcheck/1.0; +https://www.rrze.fau.de/bots/legalcheck/)", errs: []string{"UserAgent"}},
		{name: "two spaces before mailto", ua: "FAU-RRZE-Legalcheck/1.0 (+https://www.rrze.fau.de/bots/legalcheck/;  mailto:webmaster@fau.de)", errs: []string{"UserAgent"}, mention: "mailto:"},
		{name: "no mailto", ua: "FAU-RRZE-Legalcheck/1.0 (+https://www.rrze.fau.de/bots/legalcheck/;webmaster@fau.de)", errs: []string{"UserAgent"}},
		{name: "no contact", ua: "FAU-RRZE-Legalcheck/1.0 (+https://www.rrze.fau.de/bots/legalcheck/)", errs: []string{"Contact"}},
		{name: "no plus", ua: "FAU-RRZE-Legalcheck/1.0 (https://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)", errs: []string{"UserAgent"}, mention: "+<INFO-URL>"},
		{name: "http info URL", ua: "FAU-RRZE-Legalcheck/1.0 (+http://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)", errs: []string{"InfoURL"}, mention: "https"},
		{name: "relative info URL", ua: "FAU-RRZE-Legalcheck/1.0 (+/bots/legalcheck/;mailto:webmaster@fau.de)", errs: []string{"InfoURL"}},
		{name: "bad e-mail", ua: "FAU-RRZE-Legalcheck/1.0 (+https://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster)", errs: []string{"Contact"}},
		{name: "one-part version", ua: "FAU-RRZE-Legalcheck/1 (+https://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)", errs: []string{"Version"}},
		{name: "version with letters", ua: "FAU-RRZE-Legalcheck/1.0b (+https://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)", errs: []string{"Version"}},
		{name: "lower-case prefix", ua: "fau-rrze-legalcheck/1.0 (+https://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)", errs: []string{"UserAgent"}},
		{name: "technology as bot", ua: "FAU-RRZE-curl/1.0 (+https://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)", errs: []string{"Bot"}, mention: "technology"},
		{name: "empty bot", ua: "FAU-RRZE-/1.0 (+https://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)", errs: []string{"Bot"}},
		{name: "space in bot", ua: "FAU-RRZE-Legal check/1.0 (+https://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)", errs: []string{"Bot"}, mention: "space"},
		{name: "no space before comment", ua: "FAU-RRZE-Legalcheck/1.0(+https://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)", errs: []string{"UserAgent"}},
		{name: "text after comment", ua: legalcheckUA + " colly/2.3.0", errs: []string{"UserAgent"}},
		{name: "every part wrong", ua: "FAU-RR.ZE-Le$gal/x (+ftp://h;mailto:a@b)", errs: []string{"Bot", "Contact", "InfoURL", "Org", "Version"}},
		{name: "control character", ua: "FAU-RRZE-Legalcheck/1.0 (+https://www.rrze.fau.de/\r\nX: y;mailto:webmaster@fau.de)", errs: []string{"UserAgent"}, mention: "control"},
		{name: "Colly default", ua: "colly - https://github.com/gocolly/colly", errs: []string{"UserAgent"}, mention: "Colly's default"},
	})
}

// TestParseGeneric pins the generic grammar: Token/Version (+URL; mailto:EMAIL), the RFC 9309
// Mozilla/5.0 (compatible; …) form, and the refusal of browsers, tools and library defaults.
func TestParseGeneric(t *testing.T) {
	runParseCases(t, Generic, []parseCase{
		{name: "canonical", ua: "ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org)"},
		{name: "no contact warns", ua: "ExampleBot/1.0 (+https://example.org/bot)", warns: []string{"Contact"}},
		{name: "RFC 9309 §2.2.1 example", ua: "Mozilla/5.0 (compatible; ExampleBot/0.1; https://www.example.com/bot.html)", warns: []string{"Contact"}},
		{name: "Mozilla compatible with +URL", ua: "Mozilla/5.0 (compatible; ExampleBot/0.1; +https://www.example.com/bot.html)", warns: []string{"Contact"}},
		{name: "Mozilla compatible with contact", ua: "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.org/bot; mailto:bot@example.org)"},
		{name: "FAU string is generic too", ua: legalcheckUA},
		{name: "no space, bare URL and address", ua: "ExampleBot/1.0 (https://example.org/bot;bot@example.org)"},
		{name: "free text in comment", ua: "ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org; research on accessibility)"},
		{name: "library as later product", ua: "ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org) colly/2.3.0"},
		{name: "http URL warns", ua: "Example_Bot/1.0 (+http://example.org/bot; mailto:bot@example.org)", warns: []string{"InfoURL"}},

		{name: "Mozilla/5.0", ua: "Mozilla/5.0", errs: []string{"UserAgent"}, mention: "browser"},
		{name: "python-requests", ua: "python-requests/2.32", errs: []string{"InfoURL", "Token"}, warns: []string{"Contact"}, mention: "technology"},
		{name: "curl", ua: "curl/8.0", errs: []string{"InfoURL", "Token"}, warns: []string{"Contact"}, mention: "technology"},
		{name: "Go default", ua: "Go-http-client/1.1", errs: []string{"InfoURL", "Token"}, warns: []string{"Contact"}, mention: "Go's net/http"},
		{name: "Colly default", ua: "colly - https://github.com/gocolly/colly", errs: []string{"UserAgent"}, mention: "Colly's default"},
		{name: "Crawler", ua: "Crawler", errs: []string{"InfoURL", "Token", "Version"}, warns: []string{"Contact"}, mention: "generic"},
		{name: "Chrome", ua: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36", errs: []string{"UserAgent"}, mention: "browser"},
		{name: "Firefox", ua: "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0", errs: []string{"UserAgent"}, mention: "browser"},
		{name: "bot then browser products", ua: "ExampleBot/1.0 (+https://example.org/bot) Chrome/120.0 Safari/537.36", errs: []string{"UserAgent"}, warns: []string{"Contact"}, mention: "browser"},
		{name: "Googlebot impersonation", ua: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", errs: []string{"Token"}, warns: []string{"Contact", "InfoURL"}, mention: "Google"},
		{name: "MSIE compatible", ua: "Mozilla/5.0 (compatible; MSIE 9.0; Windows NT 6.1; Trident/5.0)", errs: []string{"InfoURL", "Token"}, warns: []string{"Contact"}, mention: "browser"},
		{name: "compatible without product", ua: "Mozilla/5.0 (compatible; +https://example.org/bot)", errs: []string{"UserAgent"}, warns: []string{"Contact"}},
		{name: "no version", ua: "ExampleBot (+https://example.org/bot)", errs: []string{"Version"}, warns: []string{"Contact"}},
		{name: "no comment", ua: "ExampleBot/1.0", errs: []string{"InfoURL"}, warns: []string{"Contact"}},
		{name: "digit in token", ua: "Example2Bot/1.0 (+https://example.org/bot; mailto:bot@example.org)", errs: []string{"Token"}, mention: "digits"},
		{name: "dot in token", ua: "Example.Bot/1.0 (+https://example.org/bot; mailto:bot@example.org)", errs: []string{"Token"}},
		{name: "technology with bot suffix", ua: "colly-bot/1.0 (+https://example.org/bot; mailto:bot@example.org)", errs: []string{"Token"}, mention: "Colly"},
		{name: "technology in CamelCase", ua: "ScrapyCrawler/1.0 (+https://example.org/bot; mailto:bot@example.org)", errs: []string{"Token"}, mention: "Scrapy"},
		{name: "relative URL", ua: "ExampleBot/1.0 (+/bot; mailto:bot@example.org)", errs: []string{"InfoURL"}},
		{name: "ftp URL", ua: "ExampleBot/1.0 (+ftp://example.org/bot; mailto:bot@example.org)", errs: []string{"InfoURL"}},
		{name: "URL with credentials", ua: "ExampleBot/1.0 (+https://me:secret@example.org/bot; mailto:bot@example.org)", errs: []string{"InfoURL"}},
		{name: "bad e-mail", ua: "ExampleBot/1.0 (+https://example.org/bot; mailto:bot@localhost)", errs: []string{"Contact"}},
		{name: "unclosed comment", ua: "ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org", errs: []string{"UserAgent"}},
		{name: "stray text", ua: "ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org) ) ok", errs: []string{"UserAgent"}},
		{name: "starts with comment", ua: "(+https://example.org/bot) ExampleBot/1.0", errs: []string{"UserAgent"}, warns: []string{"Contact"}},
		{name: "non-ASCII", ua: "ExampleBöt/1.0 (+https://example.org/bot)", errs: []string{"UserAgent"}, mention: "non-ASCII"},
		{name: "every part wrong", ua: "Go/1.0/x (+mailto:x; mailto:no-at-sign)", errs: []string{"Contact", "InfoURL", "Token", "Version"}},
	})
}

func TestParseEmptyAndUnknownProfile(t *testing.T) {
	for _, ua := range []string{"", "   ", "\t"} {
		if _, _, err := Parse(ua, Generic); !errors.Is(err, ErrNoIdentity) {
			t.Errorf("Parse(%q) = %v, want ErrNoIdentity", ua, err)
		}
	}
	_, _, err := Parse(legalcheckUA, "rrze")
	if got := fields(problemsOf(t, err)); !slices.Equal(got, []string{"Profile"}) {
		t.Errorf("unknown profile: problems on %v, want [profile]", got)
	}
	// The zero Profile means Generic.
	id, _, err := Parse("ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org)", "")
	if err != nil || id.Profile != Generic {
		t.Errorf("Parse with profile \"\" = %+v, %v; want a Generic identity", id, err)
	}
}

var (
	exampleBot = Identity{Profile: Generic, Token: "ExampleBot", Version: "1.0",
		InfoURL: "https://example.org/bot", Contact: "bot@example.org"}
	legalcheck = Identity{Profile: FAU, Org: "RRZE", Bot: "Legalcheck", Version: "1.0",
		InfoURL: legalcheckURL, Contact: "webmaster@fau.de"}
)

// with returns id changed by f, for table entries.
func with(id Identity, f func(*Identity)) Identity {
	f(&id)
	return id
}

// TestValidate checks identities built from parts, as the CLI flags and struct literals give
// them: every problem is reported at once, each with a reason and a fix.
func TestValidate(t *testing.T) {
	cases := []struct {
		name  string
		id    Identity
		errs  []string
		warns []string
	}{
		{name: "generic", id: exampleBot},
		{name: "generic without profile", id: with(exampleBot, func(i *Identity) { i.Profile = "" })},
		{name: "generic without contact", id: with(exampleBot, func(i *Identity) { i.Contact = "" }), warns: []string{"Contact"}},
		{name: "generic with user token", id: with(exampleBot, func(i *Identity) { i.UserToken = "ExampleBot-Manual" })},
		{name: "fau", id: legalcheck},
		{name: "fau with digits", id: with(legalcheck, func(i *Identity) { i.Org = "INF12" }), warns: []string{"Org"}},
		{name: "fau with its token spelled out", id: with(legalcheck, func(i *Identity) { i.Token = "FAU-RRZE-Legalcheck" })},
		{name: "fau with user token", id: with(legalcheck, func(i *Identity) { i.UserToken = "FAU-RRZE-Legalcheck-Manual" })},

		{name: "profile only", id: Identity{Profile: FAU, Version: "1.0"}, errs: []string{"Bot", "Contact", "InfoURL", "Org"}},
		{name: "unknown profile", id: with(exampleBot, func(i *Identity) { i.Profile = "rrze" }), errs: []string{"Profile"}},
		{name: "generic every part wrong", id: Identity{Token: "python requests", Version: "1 0", InfoURL: "example.org/bot", Contact: "Bot <bot@example.org>"},
			errs: []string{"Contact", "InfoURL", "Token", "Token", "Version"}},
		{name: "generic token with newline", id: with(exampleBot, func(i *Identity) { i.Token = "Example\r\nX-Evil: 1" }), errs: []string{"Token"}},
		{name: "generic browser token", id: with(exampleBot, func(i *Identity) { i.Token = "Safari" }), errs: []string{"Token"}},
		{name: "generic mailto contact", id: with(exampleBot, func(i *Identity) { i.Contact = "mailto:bot@example.org" }), errs: []string{"Contact"}},
		{name: "generic URL with semicolon", id: with(exampleBot, func(i *Identity) { i.InfoURL = "https://example.org/bot;v=1" }), errs: []string{"InfoURL"}},
		{name: "generic URL with space", id: with(exampleBot, func(i *Identity) { i.InfoURL = "https://example.org/my bot" }), errs: []string{"InfoURL"}},
		{name: "generic with FAU parts", id: with(exampleBot, func(i *Identity) { i.Org = "RRZE" }), errs: []string{"Profile"}},
		{name: "user token equals crawl token", id: with(exampleBot, func(i *Identity) { i.UserToken = "examplebot" }), errs: []string{"UserToken"}},
		{name: "user token with digits", id: with(exampleBot, func(i *Identity) { i.UserToken = "ExampleBot2" }), errs: []string{"UserToken"}},
		{name: "fau every part missing but profile and token", id: Identity{Profile: FAU, Token: "Legalcheck"}, errs: []string{"Bot", "Contact", "InfoURL", "Org", "Token", "Version"}},
		{name: "fau org with hyphen", id: with(legalcheck, func(i *Identity) { i.Org = "RR-ZE" }), errs: []string{"Org"}},
		{name: "fau bot with prefix", id: with(legalcheck, func(i *Identity) { i.Bot = "FAU-RRZE-Legalcheck" }), errs: []string{"Bot"}},
		{name: "fau technology bot", id: with(legalcheck, func(i *Identity) { i.Bot = "python-requests" }), errs: []string{"Bot"}},
		{name: "fau http URL", id: with(legalcheck, func(i *Identity) { i.InfoURL = "http://www.rrze.fau.de/" }), errs: []string{"InfoURL"}},
		{name: "fau no contact", id: with(legalcheck, func(i *Identity) { i.Contact = "" }), errs: []string{"Contact"}},
		{name: "fau user token not FAU", id: with(legalcheck, func(i *Identity) { i.UserToken = "LegalcheckUser" }), errs: []string{"UserToken"}},
		{name: "fau version with one part", id: with(legalcheck, func(i *Identity) { i.Version = "1" }), errs: []string{"Version"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			warns, err := tc.id.Validate()
			errs := problemsOf(t, err)
			checkExplained(t, errs)
			checkExplained(t, warns)
			if got := fields(errs); !slices.Equal(got, tc.errs) {
				t.Errorf("errors on %v, want %v\n%v", got, tc.errs, err)
			}
			if got := fields(warns); !slices.Equal(got, tc.warns) {
				t.Errorf("warnings on %v, want %v\n%v", got, tc.warns, warns)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Errorf("errors.Is(%v, ErrInvalid) = false", err)
			}
		})
	}
}

// TestValidationErrorLists checks that the error text an operator reads lists every problem on
// a line of its own, each with its fix.
func TestValidationErrorLists(t *testing.T) {
	_, err := Identity{Token: "curl", Version: "8.0", InfoURL: "ftp://x", Contact: "nobody"}.Validate()
	ps := problemsOf(t, err)
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(ps)+1 || len(ps) < 3 {
		t.Fatalf("Error() has %d lines for %d problems:\n%s", len(lines), len(ps), err)
	}
	for i, p := range ps {
		line := lines[i+1]
		if !strings.Contains(line, p.Message) || !strings.Contains(line, "fix: "+p.Fix) {
			t.Errorf("line %q does not carry problem %+v", line, p)
		}
	}
}

func TestNoIdentity(t *testing.T) {
	for _, id := range []Identity{{}, {Profile: Generic}, {Profile: FAU}} {
		if !id.IsZero() {
			t.Errorf("%+v.IsZero() = false", id)
		}
		if _, err := id.Validate(); !errors.Is(err, ErrNoIdentity) {
			t.Errorf("%+v.Validate() = %v, want ErrNoIdentity", id, err)
		}
	}
	for _, field := range []string{"Identity.Token", "Identity.Version", "Identity.InfoURL", "Identity.Contact", "identity.FAU", "Identity.Org", "Identity.Bot", "identity.Parse"} {
		if !strings.Contains(ErrNoIdentity.Error(), field) {
			t.Errorf("ErrNoIdentity does not name %s: %v", field, ErrNoIdentity)
		}
	}
	if exampleBot.IsZero() || (Identity{Version: "1.0"}).IsZero() {
		t.Error("a configured identity reports IsZero")
	}
}

// TestHeaders pins the header values and tokens each identity yields.
func TestHeaders(t *testing.T) {
	mozilla, _, err := Parse("Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.org/bot)", Generic)
	if err != nil {
		t.Fatal(err)
	}
	legacy, _, err := Parse("FAU-RRZE-Legalcheck/1.0 (+https://www.rrze.fau.de/bots/legalcheck/; mailto:webmaster@fau.de)", FAU)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name                          string
		id                            Identity
		ua, crawl, user, userUA, from string
	}{
		{"generic", exampleBot,
			"ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org)", "ExampleBot", "ExampleBot-User",
			"ExampleBot-User/1.0 (+https://example.org/bot; mailto:bot@example.org)", "bot@example.org"},
		{"generic without contact", with(exampleBot, func(i *Identity) { i.Contact = "" }),
			"ExampleBot/1.0 (+https://example.org/bot)", "ExampleBot", "ExampleBot-User",
			"ExampleBot-User/1.0 (+https://example.org/bot)", ""},
		{"generic with user token", with(exampleBot, func(i *Identity) { i.UserToken = "ExampleBot-Manual" }),
			"ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org)", "ExampleBot", "ExampleBot-Manual",
			"ExampleBot-Manual/1.0 (+https://example.org/bot; mailto:bot@example.org)", "bot@example.org"},
		{"fau", legalcheck, legalcheckUA, "FAU-RRZE-Legalcheck", "FAU-RRZE-Legalcheck-User",
			"FAU-RRZE-Legalcheck-User/1.0 (+https://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)", "webmaster@fau.de"},
		{"parsed Mozilla form keeps its shape", mozilla,
			"Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.org/bot)", "ExampleBot", "ExampleBot-User",
			"Mozilla/5.0 (compatible; ExampleBot-User/1.0; +https://example.org/bot)", ""},
		{"parsed legacy FAU separator is kept", legacy,
			"FAU-RRZE-Legalcheck/1.0 (+https://www.rrze.fau.de/bots/legalcheck/; mailto:webmaster@fau.de)", "FAU-RRZE-Legalcheck", "FAU-RRZE-Legalcheck-User",
			"FAU-RRZE-Legalcheck-User/1.0 (+https://www.rrze.fau.de/bots/legalcheck/; mailto:webmaster@fau.de)", "webmaster@fau.de"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.id.UserAgent(); got != tc.ua {
				t.Errorf("UserAgent() = %q, want %q", got, tc.ua)
			}
			if got := tc.id.CrawlToken(); got != tc.crawl {
				t.Errorf("CrawlToken() = %q, want %q", got, tc.crawl)
			}
			if got := tc.id.UserTriggeredToken(); got != tc.user {
				t.Errorf("UserTriggeredToken() = %q, want %q", got, tc.user)
			}
			if got := tc.id.UserTriggeredAgent(); got != tc.userUA {
				t.Errorf("UserTriggeredAgent() = %q, want %q", got, tc.userUA)
			}
			if got := tc.id.From(); got != tc.from {
				t.Errorf("From() = %q, want %q", got, tc.from)
			}
			// The user-triggered agent is itself a valid User-Agent naming the user token.
			u, _, err := Parse(tc.id.UserTriggeredAgent(), tc.id.Profile)
			if err != nil || u.CrawlToken() != tc.user {
				t.Errorf("Parse(UserTriggeredAgent()) = %+v, %v; want crawl token %q", u, err, tc.user)
			}
		})
	}
	short, _, err := Parse("Mozilla/5.0 (compatible; a/5.0; +https://example.org/a)", Generic)
	if want := "Mozilla/5.0 (compatible; a-User/5.0; +https://example.org/a)"; err != nil || short.UserTriggeredAgent() != want {
		t.Errorf("UserTriggeredAgent() = %q, %v; want %q (the token inside Mozilla/5.0 must not be replaced)", short.UserTriggeredAgent(), err, want)
	}
	if (Identity{}).CrawlToken() != "" || (Identity{Profile: FAU}).UserTriggeredToken() != "" {
		t.Error("a zero identity yields a token")
	}
}

// TestRoundTrip: every valid identity reads back from its own User-Agent unchanged.
func TestRoundTrip(t *testing.T) {
	ids := []Identity{
		exampleBot,
		with(exampleBot, func(i *Identity) { i.Contact = "" }),
		with(exampleBot, func(i *Identity) { i.Token, i.Version = "my_crawler-X", "2024.05.01-rc1" }),
		with(exampleBot, func(i *Identity) { i.InfoURL = "http://example.org:8080/bot?lang=en#about" }),
		legalcheck,
		with(legalcheck, func(i *Identity) { i.Org, i.Bot = "INF12", "Link-check_2" }),
	}
	for _, id := range ids {
		if _, err := id.Validate(); err != nil {
			t.Fatalf("%+v: %v", id, err)
		}
		got, _, err := Parse(id.UserAgent(), id.Profile)
		if err != nil || got != id {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", id.UserAgent(), got, err, id)
		}
	}
}

// TestVerbatimMustAgree: a hand-set Verbatim that says something else than the parts would
// send one name while robots.txt is matched with another.
func TestVerbatimMustAgree(t *testing.T) {
	cases := []struct {
		name     string
		verbatim string
		ok       bool
	}{
		{"Mozilla form of the same parts", "Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.org/bot; mailto:bot@example.org)", true},
		{"another token", "OtherBot/1.0 (+https://example.org/bot; mailto:bot@example.org)", false},
		{"another version", "ExampleBot/2.0 (+https://example.org/bot; mailto:bot@example.org)", false},
		{"invalid string", "Mozilla/5.0 (Windows NT 10.0) Gecko/20100101 Firefox/128.0", false},
	}
	for _, tc := range cases {
		id := with(exampleBot, func(i *Identity) { i.Verbatim = tc.verbatim })
		_, err := id.Validate()
		if got := fields(problemsOf(t, err)); tc.ok != (err == nil) || (!tc.ok && !slices.Contains(got, "Verbatim")) {
			t.Errorf("%s: Validate() = %v", tc.name, err)
		}
	}
}

func TestClassifyName(t *testing.T) {
	cases := []struct {
		name string
		want nameKind
	}{
		{"curl", techName}, {"CURL", techName}, {"Wget", techName}, {"python-requests", techName},
		{"Python", techName}, {"python-urllib", techName}, {"PHP", techName}, {"Java", techName},
		{"Go-http-client", techName}, {"Guzzle", techName}, {"GuzzleHttp", techName},
		{"okhttp", techName}, {"axios", techName}, {"node-fetch", techName}, {"libwww-perl", techName},
		{"colly", techName}, {"scrapy", techName}, {"HttpClient", techName}, {"Apache-HttpClient", techName},
		{"aiohttp", techName}, {"httpx", techName}, {"requests", techName}, {"undici", techName},
		{"colly-bot", techName}, {"ScrapyCrawler", techName}, {"MyPythonBot", techName}, {"GoCrawler", techName},
		{"Chrome", browserName}, {"Mozilla", browserName}, {"Safari", browserName},
		{"Bot", genericOnly}, {"Crawler", genericOnly}, {"WebCrawler", genericOnly}, {"my-bot", genericOnly},
		{"TestBot", genericOnly}, {"-", genericOnly},
		{"Googlebot", otherCrawler}, {"Googlebot-Image", otherCrawler}, {"AdsBot-Google-Mobile", otherCrawler},
		{"GPTBot", otherCrawler}, {"MJ12bot", otherCrawler}, {"archive.org_bot", otherCrawler},
		{"ExampleBot", ownName}, {"Legalcheck", ownName}, {"MyGooglebotMonitor", ownName}, {"AdsBot", ownName}, {"SafariWatchBot", ownName},
		{"Webster", ownName}, {"ExampleBot-User", ownName}, {"Attest", ownName},
	}
	for _, tc := range cases {
		if got, _ := classifyName(tc.name); got != tc.want {
			t.Errorf("classifyName(%q) = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestParseProfileAndDetect(t *testing.T) {
	for in, want := range map[string]Profile{"": Generic, "generic": Generic, "FAU": FAU, " fau ": FAU} {
		if got, err := ParseProfile(in); err != nil || got != want {
			t.Errorf("ParseProfile(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseProfile("rrze"); err == nil {
		t.Error(`ParseProfile("rrze") succeeded`)
	}
	if Detect(legalcheckUA) != FAU || Detect("ExampleBot/1.0") != Generic || Detect("Mozilla/5.0 (compatible; FAU-X-Y/1.0)") != Generic {
		t.Error("Detect guessed wrong")
	}
}
