package main

import (
	"slices"
	"testing"

	"github.com/politecrawl/etiquette/etiquettetest"
)

// TestCrawlDiscoversFirst: crawl reads robots.txt's sitemaps and llms.txt before the HTML crawl
// unless --no-discovery, guesses /sitemap.xml unless --no-sitemap-guess, reads /llms-full.txt
// with --llms-full, and says on each line how the URL was found.
func TestCrawlDiscoversFirst(t *testing.T) {
	cases := []struct {
		name      string
		sitemap   bool // robots.txt names /s.xml
		flags     []string
		requested []string // paths the origin must have been asked for, besides robots.txt and /
		never     []string
		via       map[string]string // path → found_via of its line
	}{
		{name: "by default", sitemap: true,
			requested: []string{"/s.xml", "/listed", "/llms.txt"}, never: []string{"/sitemap.xml", "/llms-full.txt"},
			via: map[string]string{"/robots.txt": "robots", "/s.xml": "robots-sitemap", "/listed": "sitemap", "/llms.txt": "convention", "/": "start", "/linked": "link"}},
		{name: "--no-discovery", sitemap: true, flags: []string{"--no-discovery"},
			requested: []string{"/linked"}, never: []string{"/s.xml", "/listed", "/llms.txt", "/sitemap.xml"}},
		{name: "a guess without a Sitemap line", requested: []string{"/sitemap.xml"},
			via: map[string]string{"/sitemap.xml": "convention"}},
		{name: "--no-sitemap-guess", flags: []string{"--no-sitemap-guess"}, never: []string{"/sitemap.xml"}},
		{name: "--llms-full", flags: []string{"--llms-full"}, requested: []string{"/llms-full.txt"},
			via: map[string]string{"/llms-full.txt": "convention"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			site := etiquettetest.NewSite()
			t.Cleanup(site.Close)
			o := site.NewOrigin()
			robots := "User-agent: *\nAllow: /\n"
			if c.sitemap {
				robots += "Sitemap: " + o.URL + "/s.xml\n"
			}
			o.Robots(robots).Page("/", "Home", "/linked").Page("/linked", "Linked").Page("/listed", "Listed")
			o.Serve("/s.xml", etiquettetest.Sitemap(o.URL+"/listed"))

			code, lines, errOut := crawlSite(t, o, c.flags...)

			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			got := pagesRequested(o)
			for _, p := range c.requested {
				if !slices.Contains(got, p) {
					t.Errorf("%s was not requested: %q", p, got)
				}
			}
			for _, p := range c.never {
				if slices.Contains(got, p) {
					t.Errorf("%s was requested: %q", p, got)
				}
			}
			via := map[string]string{}
			for _, l := range lines {
				via[l.URL[len(o.URL):]] = l.FoundVia
			}
			for p, want := range c.via {
				if via[p] != want {
					t.Errorf("%s: found_via %q, want %q", p, via[p], want)
				}
			}
		})
	}
}

func TestCrawlRefusesANegativeLastmodTrust(t *testing.T) {
	args := append(append([]string{"crawl", "--no-cache", "--lastmod-trust", "-1h"}, identityArgs...), "https://example.org/")
	if code, _, errOut := runCLI(t, nil, args...); code != exitUsage {
		t.Fatalf("--lastmod-trust -1h: exit %d, want %d: %s", code, exitUsage, errOut)
	}
}
