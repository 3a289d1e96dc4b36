package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/etiquettetest/matchers"
	"github.com/politecrawl/etiquette/politeness/robots"
)

const userUA = "ExampleBot-User/1.0 (+https://example.org/bot; mailto:bot@example.org)"

// TestFetchesOnePageForAPerson: a site that keeps crawlers out still serves a person's reader,
// which reads robots.txt first, then the one page, and follows none of its links.
func TestFetchesOnePageForAPerson(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	news := site.NewOrigin().Robots("User-agent: *\nDisallow: /\n")
	news.Page("/article", "Today's article", "/other", "/more")

	var out strings.Builder
	if err := run(context.Background(), news.URL+"/article", &out); err != nil {
		t.Fatal(err)
	}

	g := NewWithT(t)
	g.Expect(out.String()).To(ContainSubstring("Today's article"))
	g.Expect(out.String()).To(ContainSubstring("link: " + news.URL + "/other"))
	g.Expect(site).To(matchers.IdentifyEveryRequestAs(userUA, "bot@example.org"))
	g.Expect(site).To(matchers.FetchRobotsTxtFirst())
	g.Expect(site).To(matchers.NeverRequest("/other", "/more"))
	g.Expect(site).To(matchers.SendNoCookies())
	g.Expect(etiquettetest.Paths(site.Requests())).To(HaveExactElements("/robots.txt", "/article"))
}

// TestRespectsAGroupForItsOwnToken: a site that names the user-triggered token is obeyed.
func TestRespectsAGroupForItsOwnToken(t *testing.T) {
	site := etiquettetest.NewSite()
	defer site.Close()
	news := site.NewOrigin().Robots("User-agent: ExampleBot-User\nDisallow: /\n")
	news.Page("/article", "Today's article")

	err := run(context.Background(), news.URL+"/article", &strings.Builder{})
	var dis *robots.DisallowedError
	if !errors.As(err, &dis) || dis.Token != "ExampleBot-User" {
		t.Fatalf("run = %v; want a robots.DisallowedError for ExampleBot-User", err)
	}
	NewWithT(t).Expect(site).To(matchers.NeverRequest("/article"))
}
