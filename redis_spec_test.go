package etiquette_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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

// startCrawls starts n crawl processes of the origin through the Redis server or cluster at
// redisURL, as one crawl (one prefix), each with 8 workers and its own cache directory; process
// i's User-Agent says version 1.i.
func startCrawls(bin string, n int, redisURL string, prefix string, o *etiquettetest.Origin, extra ...string) []*crawlProcess {
	var ps []*crawlProcess
	for i := range n {
		// One crawler, and each process says which one it is in its version (1.0, 1.1, …), so
		// that the site can tell which process sent a request.
		args := []string{"crawl", "--token", "ExampleBot", "--bot-version", fmt.Sprintf("1.%d", i), "--info-url", "https://example.org/bot",
			"--contact", "bot@example.org", "--workers", "8", "--cache-dir", GinkgoT().TempDir(),
			"--redis", redisURL, "--redis-prefix", prefix}
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

// awaitPath waits until the origin has received a request for path, and returns it.
func awaitPath(site *etiquettetest.Site, o *etiquettetest.Origin, path string) etiquettetest.Request {
	for n := 1; ; n++ {
		awaitRequests(site, n)
		for _, r := range o.Requests() {
			if r.Target == path {
				return r
			}
		}
	}
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
			codes = awaitExit(startCrawls(bin, 4, srv.URL(), "spec:sixty:", o), 2*time.Minute)
		})

		It("finishes in every process", func() {
			Expect(codes).To(Equal([]int{0, 0, 0, 0}))
		})
		It("starts at most 3 requests in any second at the site", func() {
			Expect(site).To(matchers.StartAtMostPerSecond(3))
		})
		It("uses the budget: 2.5 starts per second or more on average (the margins leave 2.63)", func() {
			reqs := o.Requests()
			Expect(len(reqs)).To(BeNumerically(">=", 61))
			span := reqs[len(reqs)-1].At.Sub(reqs[0].At)
			rate := float64(len(reqs)-1) / span.Seconds()
			GinkgoWriter.Printf("%d requests from 4 processes in %v: %.2f starts per second\n", len(reqs), span.Round(time.Millisecond), rate)
			Expect(rate).To(BeNumerically(">=", 2.5))
		})
		It("fetches robots.txt once, every page once, and /sitemap.xml and /llms.txt once (one process discovers)", func() {
			counts := fetchCounts(o)
			Expect(counts).To(HaveKey("/sitemap.xml"))
			Expect(counts).To(HaveKey("/llms.txt"))
			Expect(counts).To(HaveLen(61 + 2))
			for path, n := range counts {
				Expect(n).To(Equal(1), "%s was fetched %d times", path, n)
			}
		})
	})

	Describe("crawling a site whose robots.txt names a sitemap, with 3 processes", Ordered, func() {
		var o *etiquettetest.Origin
		var ps []*crawlProcess
		var codes []int
		var sitemapPages []string
		BeforeAll(func() {
			site := etiquettetest.NewSite()
			DeferCleanup(site.Close)
			o = site.NewOrigin()
			// The sitemap's pages are linked from nowhere: only the sitemap finds them. It
			// answers slowly, so the other processes are there while one reads it.
			for i := 1; i <= 20; i++ {
				sitemapPages = append(sitemapPages, fmt.Sprintf("/s/%d", i))
			}
			var locs []string
			for _, p := range sitemapPages {
				locs = append(locs, o.URL+p)
			}
			o.Robots("User-agent: *\nAllow: /\nSitemap: "+o.URL+"/pages.xml\n").
				Serve("/pages.xml", etiquettetest.Sitemap(locs...).Delay(time.Second)).
				Serve("/llms.txt", etiquettetest.Status(404)).
				Otherwise(etiquettetest.HTMLPage("leaf"))
			o.Page("/", "Home")
			ps = startCrawls(bin, 3, srv.URL(), "spec:sitemap:", o)
			codes = awaitExit(ps, 2*time.Minute)
		})

		It("finishes in every process", func() {
			Expect(codes).To(Equal([]int{0, 0, 0}))
		})
		It("fetches robots.txt once, the sitemap once and every page it lists once", func() {
			counts := fetchCounts(o)
			Expect(counts["/robots.txt"]).To(Equal(1))
			Expect(counts["/pages.xml"]).To(Equal(1), "the sitemap was read by more than one process")
			Expect(counts["/llms.txt"]).To(Equal(1))
			Expect(counts).NotTo(HaveKey("/sitemap.xml"), "robots.txt names the sitemap: no guess")
			for _, p := range append([]string{"/"}, sitemapPages...) {
				Expect(counts[p]).To(Equal(1), "%s was fetched %d times", p, counts[p])
			}
			Expect(counts).To(HaveLen(4 + len(sitemapPages)))
		})
		It("reads the sitemap and llms.txt before the start page, and the start page before the pages it lists, in every process", func() {
			var order []string
			for _, r := range o.Requests() {
				order = append(order, r.Target)
			}
			Expect(order[:4]).To(Equal([]string{"/robots.txt", "/pages.xml", "/llms.txt", "/"}))
		})
		It("reports the sitemap in one process, and its pages as found via the sitemap by the processes that fetched them", func() {
			reading := 0
			for _, p := range ps {
				if strings.Contains(p.stdout.String(), `"url":"`+o.URL+`/pages.xml"`) {
					reading++
				}
			}
			Expect(reading).To(Equal(1), "processes that reported the sitemap")
			var out string
			for _, p := range ps {
				out += p.stdout.String()
			}
			for _, p := range sitemapPages {
				Expect(out).To(MatchRegexp(`"url":"%s%s"[^\n]*"found_via":"sitemap"`, regexp.QuoteMeta(o.URL), p))
			}
		})
		It("shares the sitemap's pages between the processes", func() {
			by := map[string]bool{}
			for _, r := range o.Requests() {
				if strings.HasPrefix(r.Target, "/s/") {
					by[r.Header.Get("User-Agent")] = true
				}
			}
			Expect(len(by)).To(BeNumerically(">=", 2), "the sitemap's pages were fetched by %v", by)
		})
	})

	Describe("a site answering 429 with Retry-After: 3 to one process", func() {
		It("gets nothing from any process for 3 seconds, then the rest of the crawl", func() {
			site, o := pagesSite(24, etiquettetest.HTMLPage("leaf"))
			o.Nth("/p/5", 1, etiquettetest.Status(429).RetryAfter(3*time.Second))
			codes := awaitExit(startCrawls(bin, 4, srv.URL(), "spec:429:", o), 2*time.Minute)
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
			// The process that asks for /p/12 is killed while the site holds its answer: it dies
			// holding that URL and a place.
			site, o := pagesSite(30, etiquettetest.HTMLPage("leaf").Delay(100*time.Millisecond))
			release := make(chan struct{})
			o.Nth("/p/12", 1, etiquettetest.HTMLPage("leaf").HoldUntil(release))
			ps := startCrawls(bin, 4, srv.URL(), "spec:kill:", o, "--redis-lease", "3s")
			held := awaitPath(site, o, "/p/12")
			var victim int
			_, err := fmt.Sscanf(strings.TrimPrefix(held.Header.Get("User-Agent"), "ExampleBot/1."), "%d", &victim)
			Expect(err).NotTo(HaveOccurred(), "User-Agent %q", held.Header.Get("User-Agent"))
			Expect(ps[victim].cmd.Process.Signal(syscall.SIGKILL)).To(Succeed())
			close(release)
			survivors := slices.Delete(slices.Clone(ps), victim, victim+1)
			codes := awaitExit(survivors, 2*time.Minute)
			Expect(codes).To(Equal([]int{0, 0, 0}))
			Expect(site).To(matchers.StartAtMostPerSecond(3))
			counts := fetchCounts(o)
			Expect(counts).To(HaveLen(31 + 2)) // and /sitemap.xml, /llms.txt
			var reported string
			for _, p := range survivors {
				reported += p.stderr.String()
			}
			for path, n := range counts {
				Expect(n).To(BeNumerically("<=", 2), "%s was fetched %d times", path, n)
				if n == 2 {
					Expect(reported).To(ContainSubstring(o.URL+path), "%s was fetched twice, and no process said so", path)
				}
			}
			Expect(counts["/p/12"]).To(Equal(2), "the URL the killed process held is fetched again")
		})
	})

	Describe("whose Redis stops mid-crawl", func() {
		It("send nothing while it is gone, and carry on when it is back within --redis-wait", func() {
			srv := redistest.Start(GinkgoT())
			site, o := pagesSite(24, etiquettetest.HTMLPage("leaf"))
			ps := startCrawls(bin, 2, srv.URL(), "spec:outage:", o, "--redis-wait", "30s")
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
			Expect(fetchCounts(o)).To(HaveLen(25 + 2)) // and /sitemap.xml, /llms.txt
			Expect(site).To(matchers.StartAtMostPerSecond(3))
		})

		It("exit 1 with the error when it is not back within --redis-wait", func() {
			srv := redistest.Start(GinkgoT())
			site, o := pagesSite(24, etiquettetest.HTMLPage("leaf"))
			ps := startCrawls(bin, 2, srv.URL(), "spec:gone:", o, "--redis-wait", "2s")
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

	Describe("whose Redis restarts without its data mid-crawl", func() {
		It("send no 4th start in any second and no page twice: every process reports the loss and stops", func() {
			srv := redistest.Start(GinkgoT())
			site, o := pagesSite(40, etiquettetest.HTMLPage("leaf"))
			ps := startCrawls(bin, 4, srv.URL(), "spec:empty:", o)
			awaitRequests(site, 10)
			srv.Crash()
			crashed := time.Now()
			srv.Restart()
			codes := awaitExit(ps, time.Minute)
			Expect(codes).To(Equal([]int{1, 1, 1, 1}))
			Expect(site).To(matchers.StartAtMostPerSecond(3))
			for path, n := range fetchCounts(o) {
				Expect(n).To(Equal(1), "%s was fetched %d times", path, n)
			}
			for _, p := range ps {
				Expect(p.stderr.String()).To(ContainSubstring("vanished from Redis"))
			}
			var after int
			for _, r := range o.Requests() {
				if r.At.After(crashed.Add(250 * time.Millisecond)) {
					after++
				}
			}
			GinkgoWriter.Printf("%d requests before the crash, %d after it\n", len(o.Requests())-after, after)
			Expect(after).To(BeZero(), "requests were sent after the state they were counted against vanished")
		})
	})

	Describe("whose Redis freezes mid-crawl (SIGSTOP)", func() {
		It("send nothing more, and stop within --redis-wait and one lease", func() {
			srv := redistest.Start(GinkgoT())
			site, o := pagesSite(40, etiquettetest.HTMLPage("leaf"))
			const wait, lease = 3 * time.Second, 3 * time.Second
			ps := startCrawls(bin, 3, srv.URL(), "spec:frozen:", o, "--redis-wait", wait.String(), "--redis-lease", lease.String())
			awaitRequests(site, 6)
			srv.Freeze()
			DeferCleanup(srv.Thaw)
			frozen := time.Now()
			var took []time.Duration
			for _, p := range ps {
				// Generous: the processes share 2 cores with the rest of the suite.
				Eventually(p.done).WithTimeout(wait+lease+15*time.Second).Should(BeClosed(),
					"a process still runs %v after Redis froze; its stderr:\n%s", time.Since(frozen), p.stderr.String())
				took = append(took, time.Since(frozen).Round(10*time.Millisecond))
				Expect(p.code).To(Equal(1))
				Expect(p.stderr.String()).To(ContainSubstring("--redis-wait"))
			}
			GinkgoWriter.Printf("with --redis-wait %v and --redis-lease %v the processes exited %v after Redis froze\n", wait, lease, took)
			Expect(slices.Max(took)).To(BeNumerically("<=", wait+lease+5*time.Second))
			for _, r := range o.Requests() {
				Expect(r.At.Before(frozen.Add(250*time.Millisecond))).To(BeTrue(),
					"%s arrived %v after Redis froze", r.Target, r.At.Sub(frozen))
			}
		})
	})
})
