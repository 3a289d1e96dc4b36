package etiquette_test

import (
	"io/fs"
	"log/slog"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// exampleBot is a valid identity for specs.
func exampleBot() identity.Identity {
	return identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0",
		InfoURL: "https://example.org/bot", Contact: "bot@example.org"}
}

// isolatedPolicy is a policy with its own clock and robots keeper, so that process-wide state
// from other specs cannot leak into timings or robots.txt decisions. Authorized lets specs that
// only check headers run faster than 3/s against their own loopback origins.
func isolatedPolicy(authorized ...string) politeness.Policy {
	cfg := hostclock.Config{Rate: 3, Concurrency: 2, Logger: slog.New(slog.DiscardHandler)}
	if len(authorized) > 0 {
		cfg.Authorized = map[string]float64{}
		for _, k := range authorized {
			cfg.Authorized[k] = 50
		}
	}
	clock, err := hostclock.NewLocal(cfg)
	Expect(err).NotTo(HaveOccurred())
	p := politeness.Policy{Identity: exampleBot(), Clock: clock, Robots: robots.NewKeeper(robots.Options{}), NoCache: true,
		Logger: slog.New(slog.DiscardHandler)}
	if len(authorized) > 0 {
		p.AuthorizedRates = cfg.Authorized
		p.Rate = 50
		p.Concurrency = 4
	}
	return p
}

// newTestSite is an etiquettetest site closed when the spec ends.
func newTestSite() *etiquettetest.Site {
	s := etiquettetest.NewSite()
	DeferCleanup(s.Close)
	return s
}

// allowAll is a robots.txt that allows everything.
const allowAll = "User-agent: *\nAllow: /\n"

// filesUnder lists the files below root, and with dirs its directories too, as paths relative to
// root.
func filesUnder(root string, dirs bool) []string {
	var out []string
	Expect(filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel, _ := filepath.Rel(root, path); rel != "." && (dirs || !d.IsDir()) {
			out = append(out, rel)
		}
		return nil
	})).To(Succeed())
	return out
}
