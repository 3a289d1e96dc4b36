package etiquette_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/etiquettetest/matchers"
	"github.com/politecrawl/etiquette/redisstore/redistest"
)

// These specs run the built etiquette command as separate OS processes sharing one Redis server,
// and judge them from what the site received: the budget, robots.txt, the queue and the pauses
// belong to the crawler as a whole, however many processes it runs.

// buildCLI builds cmd/etiquette into a directory removed when the calling container ends.
func buildCLI() string {
	dir, err := os.MkdirTemp("", "etiquette-redis-spec")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "etiquette")
	out, err := exec.Command("go", "build", "-o", path, "./cmd/etiquette").CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "go build ./cmd/etiquette:\n%s", out)
	return path
}

// syncBuffer is a bytes.Buffer a process writes while the spec reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// crawlProcess is one `etiquette crawl` process.
type crawlProcess struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{} // closed when it exited
	code           int
}

// startCrawls starts n crawl processes of the origin through the Redis server, as one crawl
// (one prefix), each with 8 workers and its own cache directory.
func startCrawls(bin string, n int, srv *redistest.Server, prefix string, o *etiquettetest.Origin, extra ...string) []*crawlProcess {
	var ps []*crawlProcess
	for range n {
		args := []string{"crawl", "--token", "ExampleBot", "--bot-version", "1.0", "--info-url", "https://example.org/bot",
			"--contact", "bot@example.org", "--workers", "8", "--cache-dir", GinkgoT().TempDir(),
			"--redis", srv.URL(), "--redis-prefix", prefix}
		args = append(append(args, extra...), o.URL+"/")
		p := &crawlProcess{cmd: exec.Command(bin, args...), stdout: &syncBuffer{}, stderr: &syncBuffer{},
			done: make(chan struct{})}
		p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
		Expect(p.cmd.Start()).To(Succeed())
		go func() {
			defer close(p.done)
			_ = p.cmd.Wait()
			p.code = p.cmd.ProcessState.ExitCode()
		}()
		DeferCleanup(func() {
			_ = p.cmd.Process.Kill()
			<-p.done
		})
		ps = append(ps, p)
	}
	return ps
}

// awaitExit waits for every process to exit and returns their exit codes.
func awaitExit(ps []*crawlProcess, within time.Duration) []int {
	var codes []int
	for _, p := range ps {
		Eventually(p.done).WithTimeout(within).Should(BeClosed(), "a crawl process did not exit; its stderr:\n%s", p.stderr.String())
		codes = append(codes, p.code)
	}
	return codes
}

// pagesSite is an origin with robots.txt allowing everything, a home page linking to n-1 other
// pages, and those pages answered as leaf (each in its own path /p/N).
func pagesSite(n int, leaf etiquettetest.Answer) (*etiquettetest.Site, *etiquettetest.Origin) {
	site := etiquettetest.NewSite()
	DeferCleanup(site.Close)
	var links []string
	for i := 1; i < n; i++ {
		links = append(links, fmt.Sprintf("/p/%d", i))
	}
	o := site.NewOrigin().Robots("User-agent: *\nAllow: /\n").Otherwise(leaf)
	o.Page("/", "Home", links...)
	return site, o
}

// fetchCounts counts the requests per path.
func fetchCounts(o *etiquettetest.Origin) map[string]int {
	counts := map[string]int{}
	for _, r := range o.Requests() {
		counts[r.Target]++
	}
	return counts
}

// awaitRequests waits until the site has received n requests.
func awaitRequests(site *etiquettetest.Site, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	Expect(site.Await(ctx, n)).To(Succeed())
}

var _ = Describe("crawl processes sharing one Redis", Ordered, func() {
	var bin string
	var srv *redistest.Server
	BeforeAll(func() {
		bin = buildCLI()
		srv = redistest.Start(GinkgoT())
	})

	Describe("crawling one site of 60 pages with 8 workers each", Ordered, func() {
		var site *etiquettetest.Site
		var o *etiquettetest.Origin
		var codes []int
		BeforeAll(func() {
			site, o = pagesSite(60, etiquettetest.HTMLPage("leaf"))
			codes = awaitExit(startCrawls(bin, 4, srv, "spec:sixty:", o), 2*time.Minute)
		})

		It("finishes in every process", func() {
			Expect(codes).To(Equal([]int{0, 0, 0, 0}))
		})
		It("starts at most 3 requests in any second at the site", func() {
			Expect(site).To(matchers.StartAtMostPerSecond(3))
		})
		It("uses the budget: 2.6 starts per second or more on average", func() {
			reqs := o.Requests()
			Expect(len(reqs)).To(BeNumerically(">=", 61))
			span := reqs[len(reqs)-1].At.Sub(reqs[0].At)
			Expect(float64(len(reqs)-1) / span.Seconds()).To(BeNumerically(">=", 2.6))
		})
		It("fetches robots.txt once and every page once", func() {
			counts := fetchCounts(o)
			Expect(counts).To(HaveLen(61))
			for path, n := range counts {
				Expect(n).To(Equal(1), "%s was fetched %d times", path, n)
			}
		})
	})

	Describe("a site answering 429 with Retry-After: 3 to one process", func() {
		It("gets nothing from any process for 3 seconds, then the rest of the crawl", func() {
			site, o := pagesSite(24, etiquettetest.HTMLPage("leaf"))
			o.Nth("/p/5", 1, etiquettetest.Status(429).RetryAfter(3*time.Second))
			codes := awaitExit(startCrawls(bin, 4, srv, "spec:429:", o), 2*time.Minute)
			Expect(codes).To(Equal([]int{0, 0, 0, 0}))
			Expect(site).To(matchers.WaitAfterRetryAfter())
			Expect(site).To(matchers.StartAtMostPerSecond(3))
			var paused etiquettetest.Request
			for _, r := range o.Requests() {
				if r.Status == 429 {
					paused = r
				}
			}
			Expect(paused.Done).NotTo(BeZero(), "the site never answered 429")
			var after []time.Duration
			for _, r := range o.Requests() {
				if r.At.After(paused.Done) {
					after = append(after, r.At.Sub(paused.Done))
				}
			}
			Expect(after).NotTo(BeEmpty())
			Expect(after[0]).To(BeNumerically(">=", 3*time.Second-etiquettetest.RetryAfterTolerance))
			Expect(fetchCounts(o)["/p/5"]).To(Equal(2), "the 429 page is fetched again after the pause")
		})
	})

	Describe("a process killed mid-crawl", func() {
		It("leaves the others to finish: every page once or twice, the second fetch reported, never more than 3 starts a second", func() {
			// Slow pages keep requests in flight, so the killed process dies holding some.
			site, o := pagesSite(30, etiquettetest.HTMLPage("leaf").Delay(250*time.Millisecond))
			ps := startCrawls(bin, 4, srv, "spec:kill:", o, "--redis-lease", "3s")
			awaitRequests(site, 12)
			Expect(ps[0].cmd.Process.Signal(syscall.SIGKILL)).To(Succeed())
			codes := awaitExit(ps[1:], 2*time.Minute)
			Expect(codes).To(Equal([]int{0, 0, 0}))

			Expect(site).To(matchers.StartAtMostPerSecond(3))
			counts := fetchCounts(o)
			Expect(counts).To(HaveLen(31))
			var reported string
			for _, p := range ps[1:] {
				reported += p.stderr.String()
			}
			again := 0
			for path, n := range counts {
				Expect(n).To(BeNumerically("<=", 2), "%s was fetched %d times", path, n)
				if n == 2 {
					Expect(reported).To(ContainSubstring(o.URL+path), "%s was fetched twice, and no process said so", path)
				}
			}
			for _, line := range strings.Split(reported, "\n") {
				if strings.Contains(line, "handed out again") {
					again++
				}
			}
			Expect(again).To(BeNumerically(">=", 1), "the killed process held no URL: the spec proved nothing")
		})
	})

	Describe("whose Redis stops mid-crawl", func() {
		It("send nothing while it is gone, and carry on when it is back within --redis-wait", func() {
			srv := redistest.Start(GinkgoT())
			site, o := pagesSite(24, etiquettetest.HTMLPage("leaf"))
			ps := startCrawls(bin, 2, srv, "spec:outage:", o, "--redis-wait", "30s")
			awaitRequests(site, 6)
			srv.Stop()
			stopped := time.Now()
			<-time.After(2 * time.Second) // the outage
			restarted := time.Now()
			srv.Restart()
			Expect(awaitExit(ps, 2*time.Minute)).To(Equal([]int{0, 0}))

			for _, r := range o.Requests() {
				// A request granted just before the stop may still arrive a moment later.
				Expect(r.At.After(stopped.Add(250*time.Millisecond)) && r.At.Before(restarted)).To(BeFalse(),
					"%s arrived %v after Redis stopped, while it was gone", r.Target, r.At.Sub(stopped))
			}
			Expect(fetchCounts(o)).To(HaveLen(25))
			Expect(site).To(matchers.StartAtMostPerSecond(3))
		})

		It("exit 1 with the error when it is not back within --redis-wait", func() {
			srv := redistest.Start(GinkgoT())
			site, o := pagesSite(24, etiquettetest.HTMLPage("leaf"))
			ps := startCrawls(bin, 2, srv, "spec:gone:", o, "--redis-wait", "2s")
			awaitRequests(site, 6)
			srv.Stop()
			stopped := time.Now()
			Expect(awaitExit(ps, time.Minute)).To(Equal([]int{1, 1}))
			for _, p := range ps {
				Expect(p.stderr.String()).To(ContainSubstring("Redis at " + srv.URL() + " has not answered"))
			}
			for _, r := range o.Requests() {
				Expect(r.At.Before(stopped.Add(250*time.Millisecond))).To(BeTrue(),
					"%s arrived %v after Redis stopped", r.Target, r.At.Sub(stopped))
			}
		})
	})
})
