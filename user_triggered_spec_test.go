package etiquette_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/etiquettetest/matchers"
	"github.com/politecrawl/etiquette/extensions"
	"github.com/politecrawl/etiquette/politeness"
)

// These specs run `etiquette fetch` as a person would, and judge it from what the site received:
// a fetch one person asked for is decided by robots.txt groups naming its own token, waits for
// the origin only so long, reads one page and leaves nothing behind.

const userUA = "ExampleBot-User/1.0 (+https://example.org/bot; mailto:bot@example.org)"

var identityFlags = []string{"--token", "ExampleBot", "--bot-version", "1.0", "--info-url", "https://example.org/bot", "--contact", "bot@example.org"}

// cliRun is one finished run of the etiquette command.
type cliRun struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

// runEtiquette runs the built command with args, its home, cache and temp directories pointed at
// home's subdirectories, so that the spec can see every file it leaves behind.
func runEtiquette(bin, home string, args ...string) cliRun {
	cmd := exec.Command(bin, args...)
	cmd.Dir = home // a file written relative to the working directory lands where the spec looks
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		"TMPDIR="+filepath.Join(home, "tmp"))
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := cliRun{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		r.code = exit.ExitCode()
	} else {
		Expect(err).NotTo(HaveOccurred())
	}
	return r
}

var _ = Describe("A fetch one person asked for (etiquette fetch)", Ordered, func() {
	var bin string
	BeforeAll(func() { bin = buildCLI() })

	var (
		site *etiquettetest.Site
		o    *etiquettetest.Origin
		home string
	)
	BeforeEach(func() {
		site = newTestSite()
		o = site.NewOrigin()
		o.Page("/article", "An article", "/a", "/b", "/c", "/d")
		home = GinkgoT().TempDir()
		Expect(os.MkdirAll(filepath.Join(home, "cache"), 0o755)).To(Succeed())
		Expect(os.MkdirAll(filepath.Join(home, "tmp"), 0o755)).To(Succeed())
	})
	fetch := func(extra ...string) cliRun {
		args := append(append([]string{"fetch"}, identityFlags...), extra...)
		return runEtiquette(bin, home, append(args, o.URL+"/article")...)
	}

	It("is not blocked by the crawl token's group, which keeps the crawl out", func() {
		o.Robots("User-agent: ExampleBot\nDisallow: /\n")
		r := fetch()
		Expect(r.code).To(Equal(0), r.stderr)
		Expect(r.stdout).To(ContainSubstring("An article"))
		Expect(site.Requests()).To(matchers.IdentifyEveryRequestAs(userUA, "bot@example.org"))

		mark := site.Mark()
		crawl := runEtiquette(bin, home, append(append([]string{"crawl", "--no-discovery", "--no-cache"}, identityFlags...), o.URL+"/article")...)
		Expect(crawl.code).To(Equal(1), "a crawl of a site that disallows its token fetches nothing:\n%s", crawl.stderr)
		Expect(etiquettetest.Paths(site.Since(mark))).To(HaveExactElements("/robots.txt"))
	})

	It("is blocked by a group naming the user-triggered token: exit 3, the rule, no page request", func() {
		o.Robots("User-agent: ExampleBot-User\nDisallow: /\n")
		r := fetch()
		Expect(r.code).To(Equal(3))
		Expect(r.stderr).To(ContainSubstring("ExampleBot-User"))
		Expect(r.stderr).To(ContainSubstring("Disallow: /"))
		Expect(etiquettetest.Paths(site.Requests())).To(HaveExactElements("/robots.txt"))
	})

	It("is allowed by default under 'User-agent: *' / 'Disallow: /', and blocked with --strict-robots", func() {
		o.Robots("User-agent: *\nDisallow: /\n")
		Expect(fetch().code).To(Equal(0))
		mark := site.Mark()
		r := fetch("--strict-robots")
		Expect(r.code).To(Equal(3), r.stderr)
		Expect(site.Since(mark)).To(matchers.NeverRequest("/article"))
	})

	It("requests robots.txt and the one page, and follows none of its links", func() {
		o.Robots("User-agent: *\nAllow: /\n")
		Expect(fetch().code).To(Equal(0))
		Expect(etiquettetest.Paths(site.Requests())).To(HaveExactElements("/robots.txt", "/article"))
		Expect(site.Requests()).To(matchers.FetchRobotsTxtFirst())
	})

	It("gives up at once, with the reason, when the site asks for a wait longer than --max-wait", func() {
		o.Robots("User-agent: *\nAllow: /\n")
		o.Nth("/article", 1, etiquettetest.Status(429).RetryAfter(60*time.Second))
		r := fetch("--max-wait", "2s")
		Expect(r.code).To(Equal(1))
		Expect(r.stderr).To(ContainSubstring("the site asked us to wait"))
		Expect(r.stderr).To(ContainSubstring("(Retry-After); not waiting longer than 2 s"))
		// Bound for a loaded machine: the alternative is a 60 s wait.
		Expect(r.took).To(BeNumerically("<", 20*time.Second))
		Expect(etiquettetest.Paths(site.Requests())).To(HaveExactElements("/robots.txt", "/article"))
	})

	It("leaves no file behind: no cache directory, no temporary file", func() {
		o.Robots("User-agent: *\nAllow: /\n")
		o.Serve("/article", etiquettetest.HTMLPage("Cacheable").ETag("v1").Header("Cache-Control", "max-age=3600"))
		Expect(fetch().code).To(Equal(0))
		Expect(filesUnder(home, true)).To(ConsistOf("cache", "tmp"))
	})
})

var _ = Describe("A Colly collector set up with extensions.UserTriggered", func() {
	It("sends one page request, refuses every link it is asked to follow, and marks its responses", func() {
		site := newTestSite()
		o := site.NewOrigin().Robots("User-agent: *\nAllow: /\n")
		o.Page("/", "Home", "/a", "/b", "/c")

		c := colly.NewCollector()
		p := isolatedPolicy()
		p.Mode = politeness.Crawl // UserTriggered forces its own mode
		Expect(extensions.UserTriggered(c, p)).To(Succeed())
		var (
			mu      sync.Mutex
			refused []error
			modes   []string
		)
		c.OnHTML("a[href]", func(e *colly.HTMLElement) {
			err := e.Request.Visit(e.Attr("href"))
			mu.Lock()
			refused = append(refused, err)
			mu.Unlock()
		})
		c.OnResponse(func(r *colly.Response) {
			mu.Lock()
			modes = append(modes, r.Ctx.Get(extensions.ModeKey))
			mu.Unlock()
		})
		Expect(c.Visit(o.URL + "/")).To(Succeed())

		Expect(etiquettetest.Paths(site.Requests())).To(HaveExactElements("/robots.txt", "/"))
		Expect(site.Requests()).To(matchers.IdentifyEveryRequestAs(userUA, "bot@example.org"))
		Expect(refused).To(HaveLen(3))
		for _, err := range refused {
			Expect(err).To(MatchError(extensions.ErrUserTriggeredFollow))
		}
		Expect(modes).To(Equal([]string{extensions.ModeUserTriggered}))

		_, err := extensions.Discover(c, extensions.DiscoverOptions{}, o.URL+"/")
		Expect(err).To(MatchError(extensions.ErrUserTriggeredFollow))
		Expect(site.Requests()).To(HaveLen(2), "Discover sent nothing")
	})
})
