package politeness

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/politecrawl/etiquette/discovery/sitemap"
	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/robots"
)

// robotsOfSize is a robots.txt of exactly n bytes that disallows /private for everyone.
func robotsOfSize(n int) string {
	head := "User-agent: *\nDisallow: /private\n"
	return head + strings.Repeat("#", n-len(head)-1) + "\n"
}

// A robots.txt longer than the parser's limit is cut there by the door and the cut is reported
// (a "truncated" notice); its rules before the cut apply. Before, the door's cap (1 MiB) and the
// parser's (512 KiB) differed and a 600 KiB robots.txt was cut without a word.
func TestALongRobotsTxtIsCutAndSaidSo(t *testing.T) {
	for _, c := range []struct {
		size int
		cut  bool
	}{{robots.MaxBytes, false}, {600 << 10, true}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				io.WriteString(w, robotsOfSize(c.size))
				return
			}
			io.WriteString(w, "page")
		}))
		var mu sync.Mutex
		var notices []events.Event
		d := testDoor(t, srv, func(p *Policy) {
			p.Events = &events.Bus{}
			p.Events.Subscribe(func(e events.Event) {
				if e.Type == events.Notice && e.Reason == "truncated" {
					mu.Lock()
					notices = append(notices, e)
					mu.Unlock()
				}
			})
		})
		resp, err := d.Client().Get(srv.URL + "/page")
		if err != nil {
			t.Fatalf("%d bytes: the page was refused: %v (a cut robots.txt must still be parsed)", c.size, err)
		}
		resp.Body.Close()
		if _, err := d.Client().Get(srv.URL + "/private/x"); !errors.Is(err, robots.ErrDisallowed) {
			t.Errorf("%d bytes: /private/x: %v; want the rule before the cut to apply", c.size, err)
		}
		mu.Lock()
		got := notices
		mu.Unlock()
		if c.cut && (len(got) != 1 || got[0].Kind != kind.Robots || !strings.Contains(got[0].Detail, "robots.txt longer than 524288 bytes")) {
			t.Errorf("%d bytes: notices %+v; want one saying robots.txt was cut at 524288 bytes", c.size, got)
		}
		if !c.cut && len(got) != 0 {
			t.Errorf("%d bytes: notices %+v; want none", c.size, got)
		}
		srv.Close()
	}
}

// One figure per cap: the door's caps for robots.txt and sitemaps are the parsers' limits.
func TestTheDoorsCapsAreTheParsersLimits(t *testing.T) {
	if got := DefaultMaxBodyBytes(kind.Robots); got != robots.MaxBytes {
		t.Errorf("robots.txt cap %d, parser reads %d", got, robots.MaxBytes)
	}
	if got := DefaultMaxBodyBytes(kind.Sitemap); got != sitemap.DefaultMaxBytes {
		t.Errorf("sitemap cap %d, sitemap package reads %d", got, sitemap.DefaultMaxBytes)
	}
	if got := (Policy{MaxBodyBytes: map[kind.Kind]int64{kind.Robots: 10 << 20}}).maxBody(kind.Robots); got != robots.MaxBytes {
		t.Errorf("Policy.MaxBodyBytes[robots] raised the robots.txt cap to %d", got)
	}
}
