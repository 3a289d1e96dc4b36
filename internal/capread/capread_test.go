package capread

import (
	"errors"
	"io"
	"strings"
	"testing"
)

var errTooLarge = errors.New("too large")

func tooLarge(int64) error { return errTooLarge }

// A stream longer than the cap is cut with the caller's error, one that ends at the cap reads
// whole, and either error is given again on the next read.
func TestReader(t *testing.T) {
	for _, tt := range []struct {
		in   string
		cap  int64
		want string
		err  error
	}{
		{"abcdef", 4, "abcd", errTooLarge},
		{"abcd", 4, "abcd", nil},
		{"ab", 4, "ab", nil},
		{"", 0, "", nil},
		{"a", 0, "", errTooLarge},
	} {
		r := New(strings.NewReader(tt.in), tt.cap, tooLarge)
		got, err := io.ReadAll(r)
		if string(got) != tt.want || !errors.Is(err, tt.err) || r.N() != int64(len(tt.want)) {
			t.Errorf("%q capped at %d: %q, %v, N %d; want %q, %v", tt.in, tt.cap, got, err, r.N(), tt.want, tt.err)
		}
		if tt.err != nil {
			if _, again := r.Read(make([]byte, 1)); !errors.Is(again, tt.err) {
				t.Errorf("%q capped at %d: the next read gave %v, want the same error", tt.in, tt.cap, again)
			}
		}
	}
}
