package main

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/etiquettetest/matchers"
	"github.com/politecrawl/etiquette/politeness/identity"
)

const legalcheck = "FAU-RRZE-Legalcheck/1.0 (+https://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)"

// TestCrawlsAsTheFAUIdentity crawls a recording site whose robots.txt addresses the FAU token
// in a group of its own, and checks that every request carried the FAU User-Agent and From, that
// the site's rules for that token were obeyed, and that the crawl was polite.
func TestCrawlsAsTheFAUIdentity(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the crawl's default disk cache

	site := etiquettetest.NewSite()
	defer site.Close()
	// Other crawlers are kept out of everything; ours only out of /intern.
	uni := site.NewOrigin().Robots("User-agent: *\nDisallow: /\n\nUser-agent: FAU-RRZE-Legalcheck\nDisallow: /intern\n")
	uni.Serve("/", etiquettetest.HTMLPage("Uni", "/impressum", "/datenschutz", "/intern/plan").SetCookie(etiquettetest.SessionCookie()))
	uni.Page("/impressum", "Impressum", "/").Page("/datenschutz", "Datenschutz", "/impressum")

	var out, errOut strings.Builder
	if err := run(context.Background(), config{UserAgent: legalcheck, Start: uni.URL + "/"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}

	g := NewWithT(t)
	g.Expect(site).To(matchers.IdentifyEveryRequestAs(legalcheck, "webmaster@fau.de"))
	g.Expect(site).To(matchers.FetchRobotsTxtFirst())
	g.Expect(site).To(matchers.NeverRequest("/intern"))
	g.Expect(site).To(matchers.StartAtMostPerSecond(3))
	g.Expect(site).To(matchers.KeepAtMostInFlight(2))
	g.Expect(site).To(matchers.SendNoCookies())
	g.Expect(out.String()).To(ContainSubstring("Impressum"), "the FAU token's own group allows the pages")
	g.Expect(out.String()).To(ContainSubstring("Datenschutz"))
	g.Expect(errOut.String()).To(ContainSubstring("robots.txt token FAU-RRZE-Legalcheck"))
}

// TestRefusesABadIdentity starts the crawler with User-Agents the FAU profile does not accept and
// checks that it refuses to start, says what to fix, and sends the site nothing.
func TestRefusesABadIdentity(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, bad := range []struct{ ua, says string }{
		{"", "no crawler identity"},
		{"FAU-RRZE-Legalcheck/1.0", "Contact: no contact e-mail address"},
		{"FAU-RRZE-Legalcheck/1.0 (+http://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)", "https"},
		{"Mozilla/5.0 (compatible; FAU-RRZE-Legalcheck/1.0; +https://www.rrze.fau.de/bots/legalcheck/)", "Mozilla/"},
		{"Legalcheck/1.0 (+https://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)", "FAU-"},
		{"FAU-RRZE-Legalcheck/v1 (+https://www.rrze.fau.de/bots/legalcheck/;mailto:webmaster@fau.de)", "Version"},
	} {
		t.Run(bad.ua, func(t *testing.T) {
			site := etiquettetest.NewSite()
			defer site.Close()
			uni := site.NewOrigin().Robots("User-agent: *\nAllow: /\n")
			uni.Page("/", "Uni")

			var out, errOut strings.Builder
			err := run(context.Background(), config{UserAgent: bad.ua, Start: uni.URL + "/"}, &out, &errOut)

			g := NewWithT(t)
			g.Expect(err).To(HaveOccurred(), "started with %q", bad.ua)
			g.Expect(errors.Is(err, identity.ErrInvalid) || errors.Is(err, identity.ErrNoIdentity)).To(BeTrue(), "an identity error: %v", err)
			g.Expect(err.Error()).To(ContainSubstring("refuses to start"))
			g.Expect(err.Error()).To(ContainSubstring(bad.says))
			g.Expect(site.Requests()).To(BeEmpty(), "a crawler with a bad identity sent something")
		})
	}
}

// TestProgramExitsWithABadIdentity builds the program and starts it with an FAU User-Agent without
// a contact: it exits 2 before sending anything, saying what to fix.
func TestProgramExitsWithABadIdentity(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example")
	}
	bin := filepath.Join(t.TempDir(), "fau-profile")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	site := etiquettetest.NewSite()
	defer site.Close()
	uni := site.NewOrigin().Robots("User-agent: *\nAllow: /\n")
	uni.Page("/", "Uni")

	cmd := exec.Command(bin, "-ua", "FAU-RRZE-Legalcheck/1.0 (+https://www.rrze.fau.de/bots/legalcheck/)", uni.URL+"/")
	cmd.Env = append(cmd.Environ(), "XDG_CACHE_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()

	g := NewWithT(t)
	var exit *exec.ExitError
	g.Expect(errors.As(err, &exit)).To(BeTrue(), "the program ran: %v\n%s", err, out)
	g.Expect(exit.ExitCode()).To(Equal(2), "%s", out)
	g.Expect(string(out)).To(ContainSubstring("Contact: no contact e-mail address"))
	g.Expect(string(out)).To(ContainSubstring("fix: "))
	g.Expect(site.Requests()).To(BeEmpty(), "the program sent something")
}
