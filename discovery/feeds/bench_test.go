package feeds

import (
	"errors"
	"sync"
	"syscall"
	"testing"

	"github.com/politecrawl/etiquette/discovery/discovered"
)

// BenchmarkEachItem is the cost of one feed item, read and handed over.
func BenchmarkEachItem(b *testing.B) {
	b.ReportAllocs()
	_, err := Each(newGenerated(b.N), "https://example.org/feed", Options{MaxEntries: 1 << 30, MaxBytes: 1 << 40},
		func(discovered.URL) error { return nil })
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkTwentyOriginsMillionItems reads 20 feeds at once and reports the process's peak
// resident memory. "caps": feeds of a million items (100 MB each) through Parse with the default
// caps, as discovery reads them (each stops after 10,000 entries). "every item": feeds of 50,000
// items through Each without caps, read to their end (gofeed reads each item's dates, about
// 100 µs an item, so 20 million would take an hour of CPU; memory does not grow with the items
// read). Run one at a time, so that the peak is that sub-benchmark's:
//
//	go test -run '^$' -bench 'TwentyOrigins/caps' -benchtime 1x ./discovery/feeds/
//	go test -run '^$' -bench 'TwentyOrigins/every' -benchtime 1x ./discovery/feeds/
func BenchmarkTwentyOriginsMillionItems(b *testing.B) {
	run := func(b *testing.B, items int, read func(g *generated) error) {
		for b.Loop() {
			var wg sync.WaitGroup
			errs := make(chan error, 20)
			for range 20 {
				wg.Go(func() { errs <- read(newGenerated(items)) })
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MiB") // Linux reports KiB
	}
	b.Run("caps", func(b *testing.B) {
		run(b, 1_000_000, func(g *generated) error {
			f, err := Parse(g, "https://example.org/feed", Options{})
			if !errors.Is(err, ErrCut) || len(f.Entries) != DefaultMaxEntries {
				return err
			}
			return nil
		})
	})
	b.Run("every item", func(b *testing.B) {
		run(b, 50_000, func(g *generated) error {
			_, err := Each(g, "https://example.org/feed", Options{MaxEntries: 1 << 30, MaxBytes: 1 << 30},
				func(discovered.URL) error { return nil })
			return err
		})
	})
}
