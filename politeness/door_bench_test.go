package politeness

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/identity"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// BenchmarkDoorLayers is the door's own cost per request, without a network: a transport in
// memory answers every request with 8 KB, so what remains is the layers (robots.txt decided
// from the keeper, a start slot granted at once, events, Stop tracking, the body cap), against
// the same request sent to that transport directly. "door" asks for an address literal, as the
// hot-path benchmark does; "door-by-name" for a host name, which the private-network layer traces
// to learn the address its connection reached. Latency pacing is off: at memory speed it would
// make every request wait twice the previous one's response time, and measure the wait.
//
//	go test -run '^$' -bench DoorLayers -benchmem ./politeness/
func BenchmarkDoorLayers(b *testing.B) {
	page := strings.Repeat("x", 8<<10)
	answer := roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/html"}},
			Body: io.NopCloser(strings.NewReader(page)), Request: req}, nil
	})
	quiet := slog.New(slog.DiscardHandler)
	clock, err := hostclock.NewLocal(hostclock.Config{Authorized: map[string]float64{"127.0.0.1:8080": 1e9, "localhost:8080": 1e9}, LatencyFactor: -1, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	d, err := newDoor(Policy{
		Identity: identity.Identity{Profile: identity.Generic, Token: "ExampleBot", Version: "1.0", InfoURL: "https://example.org/bot", Contact: "bot@example.org"},
		Clock:    clock, Robots: robots.NewKeeper(robots.Options{}), NoCache: true, Logger: quiet,
	}, answer)
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range []struct {
		name, url string
		rt        http.RoundTripper
	}{
		{"transport", "http://127.0.0.1:8080/page", answer},
		{"door", "http://127.0.0.1:8080/page", d},
		{"door-by-name", "http://localhost:8080/page", d},
	} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				req, _ := http.NewRequest(http.MethodGet, v.url, nil)
				req.Header.Set("Accept", "*/*")
				resp, err := v.rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, resp.Body); err != nil {
					b.Fatal(err)
				}
				resp.Body.Close()
			}
		})
	}
}
