package etiquettetest_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportRule pins what the test kit may link: etiquettetest only the standard library (a
// binary that embeds a site must not pull in test frameworks or Colly), matchers only Gomega on
// top of it — never Colly, Ginkgo, or the etiquette packages the kit judges — and isolated the
// door it configures, but no test framework and no Colly (a Colly test and a Ginkgo suite use it
// alike).
func TestImportRule(t *testing.T) {
	const module = "github.com/politecrawl/etiquette/"
	tests := []struct {
		pkg     string
		allowed func(dep string) bool
	}{
		{module + "etiquettetest", func(dep string) bool { return dep == module+"etiquettetest" }},
		{module + "etiquettetest/matchers", func(dep string) bool {
			return strings.HasPrefix(dep, module+"etiquettetest") ||
				(!strings.HasPrefix(dep, module) && !strings.Contains(dep, "colly") && !strings.Contains(dep, "ginkgo"))
		}},
		{module + "etiquettetest/isolated", func(dep string) bool {
			return !strings.Contains(dep, "colly") && !strings.Contains(dep, "ginkgo") && !strings.Contains(dep, "gomega") &&
				(!strings.HasPrefix(dep, module) || strings.HasPrefix(dep, module+"politeness") || strings.HasPrefix(dep, module+"cookies") ||
					strings.HasPrefix(dep, module+"internal/") || dep == module+"etiquettetest/isolated")
		}},
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the import rule is checked with `go list`, which is not on PATH: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.pkg, func(t *testing.T) {
			out, err := exec.Command(goTool, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", tt.pkg).CombinedOutput()
			if err != nil {
				t.Fatalf("go list: %v\n%s", err, out)
			}
			deps := strings.Fields(string(out))
			if len(deps) == 0 {
				t.Fatal("go list named no dependencies, not even the package itself")
			}
			for _, dep := range deps {
				if !tt.allowed(dep) {
					t.Errorf("%s depends on %s", tt.pkg, dep)
				}
			}
		})
	}
}
