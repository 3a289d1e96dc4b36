package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// A crawl whose Redis cannot be reached sends nothing, and after --redis-wait exits 1 naming the
// server — without the password its URL carries, on stdout or stderr.
func TestCrawlWithoutItsRedisSendsNothingAndKeepsThePasswordOut(t *testing.T) {
	var requests atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { requests.Add(1) }))
	defer site.Close()
	// A loopback port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	args := append(append([]string{"crawl", "--redis", "redis://:s3cret-pass@" + addr + "/0", "--redis-wait", "1s", "--no-cache"},
		identityArgs...), site.URL+"/")
	code, out, errOut := runCLI(t, nil, args...)
	if code != exitNo {
		t.Errorf("exit %d, want 1; stderr:\n%s", code, errOut)
	}
	if strings.Contains(out+errOut, "s3cret-pass") {
		t.Errorf("the Redis password appears in the output:\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
	if want := "Redis at redis://:xxxxx@" + addr + "/0 has not answered"; !strings.Contains(errOut, want) {
		t.Errorf("stderr does not say %q:\n%s", want, errOut)
	}
	if !strings.Contains(errOut, "--redis-wait 1s") {
		t.Errorf("stderr does not name the flag that sets how long the crawl waits:\n%s", errOut)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the site received %d requests while Redis was out of reach, want none", n)
	}
}
