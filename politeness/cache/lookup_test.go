package cache

import (
	"net/http"
	"testing"
)

func TestVaryFields(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		names []string
		star  bool
	}{
		{[]string{"accept-language, Accept"}, []string{"Accept-Language", "Accept"}, false},
		{[]string{", *"}, nil, true},
		{[]string{"Foo", "*"}, []string{"Foo"}, true},
		{[]string{"foo, FOO"}, []string{"Foo"}, false},
	} {
		names, star := varyFields(http.Header{"Vary": tc.lines})
		if star != tc.star || len(names) != len(tc.names) {
			t.Errorf("Vary %q = %v %v, want %v %v", tc.lines, names, star, tc.names, tc.star)
			continue
		}
		for i := range names {
			if names[i] != tc.names[i] {
				t.Errorf("Vary %q = %v, want %v", tc.lines, names, tc.names)
			}
		}
	}
}

// FuzzVary checks the Vary parser on any input: no panic, canonical names without duplicates,
// and "*" never reported as a name.
func FuzzVary(f *testing.F) {
	for _, s := range []string{"Accept-Language, accept", ", *", `"a,b", c`, "cookie", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, _ := varyFields(http.Header{"Vary": {s}})
		seen := map[string]bool{}
		for _, n := range names {
			if n == "*" || seen[n] || n != http.CanonicalHeaderKey(n) {
				t.Fatalf("Vary %q gave names %q", s, names)
			}
			seen[n] = true
		}
		_ = varyValue(http.Header{"X": {s}}, "X")
	})
}
