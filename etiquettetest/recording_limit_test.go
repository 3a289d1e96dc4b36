package etiquettetest

import (
	"net/http"
	"testing"
)

func TestRecordingStopsAtItsLimitAndCountsTheRest(t *testing.T) {
	site := NewSite()
	defer site.Close()
	site.limit = 2
	o := site.NewOrigin().Otherwise(Text("ok"))
	for range 3 {
		resp, err := http.Get(o.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("an unrecorded request was answered %d", resp.StatusCode)
		}
	}
	if got, dropped := len(site.Requests()), site.Unrecorded(); got != 2 || dropped != 1 {
		t.Errorf("recorded %d, unrecorded %d; want 2 and 1", got, dropped)
	}
}
