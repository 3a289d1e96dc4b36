package plan_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/discovery/plan"
	"github.com/politecrawl/etiquette/etiquettetest"
)

// BenchmarkDiscoverSitemap discovers an origin whose robots.txt names one sitemap of 50,000
// dated URLs, through a door over loopback: robots.txt, the sitemap, llms.txt and the start page
// are requested, and every URL is streamed into the frontier and handed out once (not fetched).
// It reports the URLs queued per second and the heap in use after the run.
//
//	go test -run '^$' -bench DiscoverSitemap -benchtime 5x ./discovery/plan/
func BenchmarkDiscoverSitemap(b *testing.B) {
	const n = 50_000
	site := etiquettetest.NewSite()
	defer site.Close()
	o := site.NewOrigin()
	o.Robots("User-agent: *\nAllow: /\nSitemap: "+o.URL+"/sitemap.xml\n").Page("/", "Home")
	var x strings.Builder
	x.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for i := range n {
		fmt.Fprintf(&x, "<url><loc>%s/articles/%06d/a-title-of-some-length</loc><lastmod>2026-01-%02d</lastmod></url>\n", o.URL, i, i%28+1)
	}
	x.WriteString("</urlset>")
	o.Serve("/sitemap.xml", etiquettetest.Text(x.String()))

	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		r := discover(b, testDoor(b, o), o.URL+"/", plan.Options{}, nil)
		if got := r.summary.Found["sitemap"]; got != n {
			b.Fatalf("queued %d sitemap URLs, want %d", got, n)
		}
	}
	b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "URLs/s")
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "MiB-heap-after")
}
