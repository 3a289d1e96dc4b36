package robots

import (
	"context"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// failingTransport fails with err while fail is set, as a dial does when the process is out of
// file descriptors; otherwise it sends the request.
type failingTransport struct {
	err  error
	fail atomic.Bool
}

func (t *failingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.fail.Load() {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("socket", t.err)}
	}
	return http.DefaultTransport.RoundTrip(req)
}

// A robots.txt fetch that failed because this process ran out of file descriptors is this
// machine's limit, not the site's answer: the next lookup a couple of seconds later fetches
// again, where a connection the site refused keeps the origin disallowed for the normal retry
// period (30 s). Before, EMFILE kept the origin disallowed for those 30 s too.
func TestKeeperRetriesSoonAfterTheMachineRanOutOfFileDescriptors(t *testing.T) {
	for _, c := range []struct {
		name  string
		err   syscall.Errno
		again bool // fetched again 2 s later
	}{
		{"EMFILE", syscall.EMFILE, true},
		{"ENFILE", syscall.ENFILE, true},
		{"a refused connection", syscall.ECONNREFUSED, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := newTestOrigin(t, 200, "User-agent: *\nAllow: /\n")
			clk := newFakeClock()
			k := NewKeeper(Options{Now: clk.Now})
			rt := &failingTransport{err: c.err}
			rt.fail.Store(true)
			fetch := ClientFetch(&http.Client{Transport: rt})

			e, err := k.Lookup(context.Background(), o.url(t, "/"), fetch)
			if err != nil {
				t.Fatal(err)
			}
			if e.Decide("b", o.url(t, "/page")).Allowed || e.Outcome != Unreachable {
				t.Fatalf("a failed fetch gave %v, allowed; want unreachable, disallowed", e.Outcome)
			}
			rt.fail.Store(false)
			clk.Advance(2 * time.Second)
			e, err = k.Lookup(context.Background(), o.url(t, "/"), fetch)
			if err != nil {
				t.Fatal(err)
			}
			if fetched := o.fetches.Load() == 1; fetched != c.again {
				t.Errorf("robots.txt fetched again 2 s after the failure: %v; want %v", fetched, c.again)
			}
			if allowed := e.Decide("b", o.url(t, "/page")).Allowed; allowed != c.again {
				t.Errorf("2 s after the failure /page allowed %v; want %v", allowed, c.again)
			}
		})
	}
}
