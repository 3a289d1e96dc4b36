package report

import "testing"

func TestProgressLineNamesLabelledOrigins(t *testing.T) {
	labels := map[string]string{"127.0.0.1:38383": "blog", "127.0.0.1:40000": "shop"}
	done := map[string]int{"127.0.0.1:38383": 4, "127.0.0.1:40000": 1, "other.test": 2}
	pending := map[string]Pending{"127.0.0.1:38383": {Queued: 2, Waiting: 1}}
	got := progressLine(named(done, labels), named(pending, labels), 200)
	if want := "7 done · 2 queued · 1 waiting | blog 4/2/1 · other.test 2/0/0 · shop 1/0/0"; got != want {
		t.Errorf("progressLine = %q, want %q", got, want)
	}
	if got := named(done, nil); got["127.0.0.1:38383"] != 4 {
		t.Errorf("without labels the origins keep their keys: %v", got)
	}
}
