package etiquettetest

// This file decides which Colly versions a scraper's test accepts: those etiquette's extensions
// are tested with.

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
)

// CollyModule is the module path of Colly v2.
const CollyModule = "github.com/gocolly/colly/v2"

// CollyTested names the Colly versions etiquette's extensions are tested with: v2.3.0 and its
// patch releases. etiquette's go.mod requires v2.3.0, so Go's minimal version selection never
// builds it with an older Colly; a newer one is chosen when another module of the build requires
// it, and a minor release may change what the drop-in relies on (how clones copy the transport,
// which setters replace it). [CheckCollyVersion] turns that into a failing test.
const CollyTested = "v2.3.x"

// ErrCollyUntested is what [CollyVersion] wraps when the build links a Colly outside
// [CollyTested], or links none.
var ErrCollyUntested = errors.New("etiquettetest: the build's Colly is not a version etiquette is tested with (" + CollyTested + ")")

// CollyVersion returns the version of Colly v2 linked into the running binary — in a test, the
// test binary — as its build information records it (the replacement's version when go.mod
// replaces the module). The error wraps [ErrCollyUntested] when that version is outside
// [CollyTested], when the binary links no Colly, or when the version is unknown (a replacement
// by a local directory).
func CollyVersion() (string, error) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", fmt.Errorf("%w: the binary carries no build information", ErrCollyUntested)
	}
	return collyIn(info)
}

// CheckCollyVersion reports with t.Errorf, unless the binary links a Colly of [CollyTested], what
// is linked and what to do; it returns whether the version is one etiquette is tested with. Call
// it from a test of a package that imports Colly: another package's test binary links none.
func CheckCollyVersion(t TB) bool {
	t.Helper()
	if _, err := CollyVersion(); err != nil {
		t.Errorf("%v", err)
		return false
	}
	return true
}

func collyIn(info *debug.BuildInfo) (string, error) {
	for _, m := range info.Deps {
		if m.Path != CollyModule {
			continue
		}
		v := m.Version
		if m.Replace != nil {
			v = m.Replace.Version
		}
		switch {
		case v == "":
			return "", fmt.Errorf("%w: %s is replaced by %s, whose version is unknown", ErrCollyUntested, CollyModule, m.Replace.Path)
		case !strings.HasPrefix(v, "v2.3."):
			// A pseudo-version of a commit after v2.3.x (v2.3.1-0.2025…) still starts so.
			return v, fmt.Errorf("%w: it is %s; require %s v2.3.0 in go.mod (go get %s@v2.3.0), or check the drop-in with your version before relying on it", ErrCollyUntested, v, CollyModule, CollyModule)
		}
		return v, nil
	}
	return "", fmt.Errorf("%w: the binary links no %s; check from a package that imports it", ErrCollyUntested, CollyModule)
}
