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

// BenchmarkTwentyOriginsMillionItems reads 20 feeds of a million items (100 MB each) at once and
// reports the process's peak resident memory. "caps" uses Parse with the default caps, as
// discovery does (each feed stops after 10,000 entries); "every item" uses Each and reads all
// 20 million items. Run it alone, so that the peak is this benchmark's:
//
//	go test -run '^$' -bench 'TwentyOrigins/caps' -benchtime 1x ./discovery/feeds/
func BenchmarkTwentyOriginsMillionItems(b *testing.B) {
	run := func(b *testing.B, read func(g *generated) error) {
		for b.Loop() {
			var wg sync.WaitGroup
			errs := make(chan error, 20)
			for range 20 {
				wg.Go(func() { errs <- read(newGenerated(1_000_000)) })
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
		run(b, func(g *generated) error {
			f, err := Parse(g, "https://example.org/feed", Options{})
			if !errors.Is(err, ErrCut) || len(f.Entries) != DefaultMaxEntries {
				return err
			}
			return nil
		})
	})
	b.Run("every item", func(b *testing.B) {
		run(b, func(g *generated) error {
			_, err := Each(g, "https://example.org/feed", Options{MaxEntries: 1 << 30, MaxBytes: 1 << 30},
				func(discovered.URL) error { return nil })
			return err
		})
	})
}
