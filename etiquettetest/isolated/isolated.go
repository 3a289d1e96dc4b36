// Package isolated gives a test a door policy that shares nothing with the rest of the process
// and writes nothing outside the test's temporary directory:
//
//	p := isolated.Policy(t, botIdentity) // *testing.T, *testing.B or Ginkgo's GinkgoT()
//	extensions.Polite(c, p)
//
// A Policy with only an Identity uses process-wide state on purpose — one host clock and one
// robots.txt keeper per process, so that every collector shares one budget per origin — and a
// disk cache in the user's cache directory, which outlives the process. In a test that is a
// leak: a test's pauses and robots.txt copies reach the next test, and a test run fills the
// developer's home with cached pages. The policy returned here has its own host clock, its own
// robots.txt keeper and a disk cache under t.TempDir(), closed when the test ends; every other
// field is the default, so the scraper is tested at the pace and with the rules it runs with.
//
// It is a package of its own, apart from etiquettetest, because it links the door (etiquette's
// politeness packages): etiquettetest links only the standard library.
package isolated

import (
	"path/filepath"

	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// TB is the part of testing.TB that Policy uses; *testing.T, *testing.B and Ginkgo's GinkgoT()
// satisfy it.
type TB interface {
	Helper()
	TempDir() string
	Cleanup(func())
	Fatalf(format string, args ...any)
}

// Policy returns a policy for id with a host clock, a robots.txt keeper and a disk cache of its
// own: the cache in a directory under t.TempDir(), closed when the test ends. Set more fields on
// the result as the scraper does (a Logger, Cookies, a lower Rate). It fails the test when the
// cache directory cannot be opened.
func Policy(t TB, id identity.Identity) politeness.Policy {
	t.Helper()
	clock, err := hostclock.NewLocal(hostclock.Config{})
	if err != nil {
		t.Fatalf("isolated: the host clock: %v", err) // the default configuration is valid: not reached
		return politeness.Policy{}
	}
	store, err := cache.NewDiskStore(filepath.Join(t.TempDir(), "http"), cache.DiskOptions{})
	if err != nil {
		t.Fatalf("isolated: the test's cache directory: %v", err)
		return politeness.Policy{} // for a TB whose Fatalf returns
	}
	t.Cleanup(func() { _ = store.Close() })
	return politeness.Policy{Identity: id, Clock: clock, Robots: robots.NewKeeper(robots.Options{}), CacheStore: store}
}
