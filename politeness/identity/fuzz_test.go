package identity

import (
	"strings"
	"testing"
)

// FuzzParse: Parse never panics, and whatever it accepts is a valid identity that reads back
// from its own User-Agent (configured or canonical) and yields a valid user-triggered agent.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		legalcheckUA,
		"FAU-RRZE-Legalcheck/1.0 (+https://www.rrze.fau.de/bots/legalcheck/; mailto:webmaster@fau.de)",
		"FAU-INF12-Link-check/2.0.1 (+https://www.cs.fau.de/bot;mailto:admin@cs.fau.de)",
		"ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org)",
		"Mozilla/5.0 (compatible; ExampleBot/0.1; +https://www.example.com/bot.html)",
		"ExampleBot/1.0 (https://example.org/bot;bot@example.org; note (nested \\) text)) colly/2.3.0",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36",
		"colly - https://github.com/gocolly/colly", "Go-http-client/1.1", "python-requests/2.32", "curl/8.0",
		"Mozilla/5.0 (compatible; a/5.0; +https://example.org/a)",
		"Crawler", "FAU-Bot", "FAU-RRZE-Legalcheck", "FAU-RRZE-Legalcheck/1.0", "Mozilla/5.0", "", "(", ")", "/",
	} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, ua string, fau bool) {
		p := Generic
		if fau {
			p = FAU
		}
		id, _, err := Parse(ua, p)
		if err != nil {
			if !id.IsZero() {
				t.Fatalf("Parse(%q) failed (%v) but returned %+v", ua, err, id)
			}
			return
		}
		if _, err := id.Validate(); err != nil {
			t.Fatalf("Parse(%q) = %+v, which does not validate: %v", ua, id, err)
		}
		if got := id.UserAgent(); got != strings.Trim(ua, " \t") {
			t.Fatalf("Parse(%q).UserAgent() = %q", ua, got)
		}
		if !strings.Contains(id.UserAgent(), id.CrawlToken()) {
			t.Fatalf("crawl token %q not in %q", id.CrawlToken(), id.UserAgent())
		}
		if again, _, err := Parse(id.UserAgent(), p); err != nil || again != id {
			t.Fatalf("Parse(%q) = %+v, %v; want %+v", id.UserAgent(), again, err, id)
		}
		canon := id
		canon.Verbatim = ""
		if again, _, err := Parse(canon.UserAgent(), p); err != nil || again != canon {
			t.Fatalf("canonical %q reads back as %+v, %v; want %+v", canon.UserAgent(), again, err, canon)
		}
		u, _, err := Parse(id.UserTriggeredAgent(), p)
		if err != nil || u.CrawlToken() != id.UserTriggeredToken() || u.Version != id.Version ||
			u.InfoURL != id.InfoURL || u.Contact != id.Contact {
			t.Fatalf("user-triggered agent %q of %+v reads as %+v, %v", id.UserTriggeredAgent(), id, u, err)
		}
	})
}

// FuzzValidateToken: ValidateToken never panics, and every token it accepts is the crawl token of
// a valid identity of one of the profiles — what `etiquette ua build` could produce.
func FuzzValidateToken(f *testing.F) {
	for _, seed := range []string{"ExampleBot", "ExampleBot-User", "FAU-RRZE-Legalcheck", "FAU-INF12-Link-check",
		"FAU-", "FAU--", "FAU-X-", "", "*", "ExampleBot/1.0", "Example Bot", "curl", "Googlebot"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, token string) {
		if ValidateToken(token) != nil {
			return
		}
		generic := Identity{Token: token, Version: "1.0", InfoURL: "https://example.org/bot", Contact: "bot@example.org"}
		if _, err := generic.Validate(); err == nil {
			return
		}
		org, bot, _ := strings.Cut(strings.TrimPrefix(token, "FAU-"), "-")
		fau := Identity{Profile: FAU, Org: org, Bot: bot, Version: "1.0", InfoURL: "https://example.org/bot", Contact: "bot@example.org"}
		if _, err := fau.Validate(); err != nil || fau.CrawlToken() != token {
			t.Fatalf("ValidateToken(%q) accepted a token no identity has: generic and FAU (%+v) fail: %v", token, fau, err)
		}
	})
}
