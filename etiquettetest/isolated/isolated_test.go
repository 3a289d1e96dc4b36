package isolated_test

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/politecrawl/etiquette/etiquettetest"
	"github.com/politecrawl/etiquette/etiquettetest/isolated"
	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/cache"
	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/identity"
)

var bot = identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0", InfoURL: "https://example.org/bot"}

// crawl reads a cacheable page twice through a door built from p and returns what the second
// read was answered from.
func crawl(t *testing.T, p politeness.Policy) (origin string, secondRead string) {
	t.Helper()
	site := etiquettetest.NewSite()
	t.Cleanup(site.Close)
	o := site.NewOrigin().Robots("User-agent: *\nAllow: /\n")
	o.Serve("/", etiquettetest.HTMLPage("Home").Header("Cache-Control", "max-age=600"))
	d, err := politeness.NewDoor(p)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		resp, err := d.Client().Get(o.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	for outcome, n := range d.Stats().Cache {
		if n > 0 && outcome != "miss" {
			secondRead = outcome
		}
	}
	return o.Addr(), secondRead
}

// homeInTempDir points $HOME and $XDG_CACHE_HOME at a temporary directory and returns the
// cache directory a default policy would write.
func homeInTempDir(t *testing.T) string {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	dir, err := cache.DefaultDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func sharedClockKnows(origin string) bool {
	return slices.ContainsFunc(hostclock.Shared().Stats(), func(s hostclock.OriginStats) bool { return s.Origin == origin })
}

// TestPolicyWritesNothingOutsideTheTest: a crawl through the isolated policy caches (its second
// read is answered from the cache), yet the user's cache directory is never created and the
// process-wide host clock never hears of the origin. The default policy, for contrast, does both
// — the two checks can fail.
func TestPolicyWritesNothingOutsideTheTest(t *testing.T) {
	t.Run("isolated", func(t *testing.T) {
		dflt := homeInTempDir(t)
		origin, second := crawl(t, isolated.Policy(t, bot))
		if second != "fresh" {
			t.Errorf("the second read was answered %q, want fresh from the test's cache", second)
		}
		if _, err := os.Stat(dflt); !os.IsNotExist(err) {
			t.Errorf("the user's cache directory %s exists after a crawl through the isolated policy (%v)", dflt, err)
		}
		if sharedClockKnows(origin) {
			t.Errorf("the process-wide host clock knows %s after a crawl through the isolated policy", origin)
		}
	})
	t.Run("default policy, for contrast", func(t *testing.T) {
		dflt := homeInTempDir(t)
		origin, _ := crawl(t, politeness.Policy{Identity: bot})
		if _, err := os.Stat(dflt); err != nil {
			t.Errorf("the default policy did not write the user's cache directory %s: %v", dflt, err)
		}
		if !sharedClockKnows(origin) {
			t.Errorf("the default policy's crawl of %s did not reach the process-wide host clock", origin)
		}
	})
}

// TestPolicyFailsTheTestWhenItCannotCache: a cache directory that cannot be made fails the test
// with what went wrong, rather than crawling without the cache the scraper runs with.
func TestPolicyFailsTheTestWhenItCannotCache(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ft := &fakeTB{TB: t, dir: file}
	isolated.Policy(ft, bot)
	if ft.failure == "" {
		t.Error("Policy did not fail the test though its cache directory is under a file")
	}
}

// fakeTB is a test whose TempDir is a file, recording Fatalf instead of stopping.
type fakeTB struct {
	testing.TB
	dir     string
	failure string
}

func (f *fakeTB) TempDir() string                   { return f.dir }
func (f *fakeTB) Fatalf(format string, args ...any) { f.failure = format }
