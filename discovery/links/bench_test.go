package links

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// linkHeavyPage returns a page like the one that drove a Colly crawl to 6.3 GiB: about 10 MB
// holding n same-origin links.
func linkHeavyPage(n int) []byte {
	var b bytes.Buffer
	b.WriteString("<!doctype html><html><head><title>index</title></head><body>\n")
	for i := range n {
		fmt.Fprintf(&b, "<a href=\"/p/%06d\">x</a>\n", i)
	}
	b.WriteString("</body></html>\n")
	return b.Bytes()
}

// heapPeak samples the heap's live objects every millisecond until stop is called, and returns
// the highest value seen above the level at the start.
func heapPeak() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	runtime.GC()
	base := read()
	peak := base
	done, out := make(chan struct{}), make(chan uint64)
	go func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				out <- max(peak, read()) - base
				return
			case <-tick.C:
				peak = max(peak, read())
			}
		}
	}()
	return func() uint64 { close(done); return <-out }
}

// BenchmarkExtractLinkHeavyPage extracts the links of a 10 MB page with 384,444 links, reporting
// the peak heap above the page's own bytes (sampled every millisecond).
func BenchmarkExtractLinkHeavyPage(b *testing.B) {
	page := linkHeavyPage(384_444)
	base := mustURL(b, "https://example.org/")
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	var peak uint64
	for b.Loop() {
		stop := heapPeak()
		n := 0
		s, err := Extract(bytes.NewReader(page), base, Options{MaxLinks: 1 << 30}, func(Link) { n++ })
		peak = max(peak, stop())
		if err != nil || n != 384_444 || s.Links != n {
			b.Fatalf("%d links, %v", n, err)
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(len(page))/(1<<20), "page-MiB")
}
