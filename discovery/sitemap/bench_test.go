package sitemap

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"syscall"
	"testing"
	"time"

	gopher "github.com/oxffaa/gopher-parse-sitemap"
	"github.com/politecrawl/etiquette/discovery/discovered"
)

// BenchmarkStream streams a sitemap through this package and through gopher-parse-sitemap alone,
// on the same bytes, and reports URLs/s and the peak of live heap.
//
//	go test -run '^$' -bench Stream -benchtime 3x ./discovery/sitemap/
func BenchmarkStream(b *testing.B) {
	dir := b.TempDir()
	for _, n := range []int{50_000, 250_000} {
		for _, in := range writeInputs(b, dir, n) {
			b.Run(in.label+"/etiquette", func(b *testing.B) {
				measure(b, n, in.path, func(r io.Reader) int {
					f, err := Open(r, site+"/sitemap.xml", Options{MaxURLs: n, MaxBytes: 1 << 30})
					if err != nil {
						b.Fatal(err)
					}
					res, err := f.Each(func(discovered.URL) error { return nil })
					if err != nil {
						b.Fatal(err)
					}
					return res.Kept
				})
			})
			b.Run(in.label+"/gopher", func(b *testing.B) {
				measure(b, n, in.path, func(r io.Reader) int {
					if in.gzip {
						zr, err := gzip.NewReader(r)
						if err != nil {
							b.Fatal(err)
						}
						r = zr
					}
					kept := 0
					err := gopher.Parse(r, func(e gopher.Entry) error {
						// What a caller of gopher alone needs at least: the location and lastmod.
						if e.GetLocation() != "" {
							e.GetLastModified()
							kept++
						}
						return nil
					})
					if err != nil {
						b.Fatal(err)
					}
					return kept
				})
			})
		}
	}
}

type benchInput struct {
	label, path string
	gzip        bool
}

// writeInputs writes a sitemap of n URLs to dir, plain and gzipped. The bodies are read back from
// the files, as from a socket, and no test data stays in memory, so the heap peak measures the
// parser alone.
func writeInputs(b *testing.B, dir string, n int) []benchInput {
	plain := urlset(n)
	var out []benchInput
	for _, gz := range []bool{false, true} {
		body, format := plain, "plain"
		if gz {
			body, format = gzipped(b, plain), "gzip"
		}
		in := benchInput{fmt.Sprintf("%dk-URLs-%dMB-%s", n/1000, len(plain)/1e6, format), filepath.Join(dir, fmt.Sprint(n, format)), gz}
		if err := os.WriteFile(in.path, body, 0o600); err != nil {
			b.Fatal(err)
		}
		out = append(out, in)
	}
	return out
}

// measure runs parse on the file at path b.N times, checks it yields n URLs, and reports URLs/s,
// URLs per CPU-second of the process (garbage collection included; unlike wall time, it barely
// moves when other work shares the machine) and the peak of live heap objects above the level
// before the run.
func measure(b *testing.B, n int, path string, parse func(io.Reader) int) {
	runtime.GC()
	base := heapBytes()
	stop := make(chan struct{})
	var peak uint64
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				peak = max(peak, heapBytes())
			}
		}
	})
	cpu0 := cpuTime()
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		got := parse(f)
		f.Close()
		if got != n {
			b.Fatalf("parsed %d URLs, want %d", got, n)
		}
	}
	cpu := cpuTime() - cpu0
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "URLs/s")
	b.ReportMetric(float64(n)*float64(b.N)/cpu.Seconds(), "URLs/cpu-s")
	b.ReportMetric(float64(peak-min(peak, base))/(1<<20), "peak-heap-MiB")
}

// cpuTime is the user and system CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
