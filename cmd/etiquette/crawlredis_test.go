package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/politecrawl/etiquette/redisstore/redistest"
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

// countingSite is a site of one page that counts the requests it receives.
func countingSite(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var requests atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.Path == "/robots.txt" {
			w.Write([]byte("User-agent: *\nAllow: /\n"))
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html><title>page</title></html>"))
	}))
	t.Cleanup(site.Close)
	return site, &requests
}

// A comma-separated list of addresses is refused as input, naming the form a cluster takes;
// before, it was read as one host name and waited for as an outage.
func TestACommaSeparatedRedisListIsAUsageError(t *testing.T) {
	args := append(append([]string{"crawl", "--redis", "redis://127.0.0.1:1,127.0.0.1:2", "--redis-wait", "1s", "--no-cache"},
		identityArgs...), "http://127.0.0.1:1/")
	code, _, errOut := runCLI(t, nil, args...)
	if code != exitUsage || !strings.Contains(errOut, "addr=") {
		t.Errorf("exit %d, want 2 with the addr= form named; stderr:\n%s", code, errOut)
	}
}

// One node of a cluster given as --redis is named a cluster, and nothing is sent; before, the
// crawl failed with the node's MOVED reply.
func TestOneNodeOfAClusterIsNamedACluster(t *testing.T) {
	cl := redistest.StartCluster(t)
	site, requests := countingSite(t)
	args := append(append([]string{"crawl", "--redis", "redis://" + cl.Nodes[0].Addr, "--redis-wait", "2s", "--no-cache"},
		identityArgs...), site.URL+"/")
	code, _, errOut := runCLI(t, nil, args...)
	if code != exitNo || !strings.Contains(errOut, "this is a cluster: list its nodes with addr=") {
		t.Errorf("exit %d, want 1 saying it is a cluster; stderr:\n%s", code, errOut)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the site received %d requests, want none", n)
	}
}

// The cluster form of --redis crawls.
func TestACrawlThroughAClusterURL(t *testing.T) {
	cl := redistest.StartCluster(t)
	site, requests := countingSite(t)
	args := append(append([]string{"crawl", "--redis", cl.URL(), "--no-cache", "--no-discovery"}, identityArgs...), site.URL+"/")
	code, out, errOut := runCLI(t, nil, args...)
	if code != exitOK {
		t.Fatalf("exit %d, want 0; stderr:\n%s", code, errOut)
	}
	if n := requests.Load(); n != 2 || !strings.Contains(out, `"status":200`) {
		t.Errorf("%d requests (want robots.txt and the page); stdout:\n%s", n, out)
	}
}

// A Redis that may evict the crawl's keys is refused before anything is sent, with what to set;
// --redis-allow-eviction accepts it.
func TestARedisThatMayEvictIsRefusedWithWhatToSet(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	for _, kv := range [][2]string{{"maxmemory", "4mb"}, {"maxmemory-policy", "volatile-lru"}} {
		if err := srv.Client().ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	site, requests := countingSite(t)
	base := append([]string{"crawl", "--redis", srv.URL(), "--no-cache", "--no-discovery"}, identityArgs...)
	code, _, errOut := runCLI(t, nil, append(slices.Clone(base), site.URL+"/")...)
	if code != exitNo {
		t.Errorf("exit %d, want 1; stderr:\n%s", code, errOut)
	}
	for _, want := range []string{srv.Addr, "volatile-lru", "noeviction", "--redis-cache", "--redis-allow-eviction"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr does not say %q:\n%s", want, errOut)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the site received %d requests from a crawl on an evicting Redis, want none", n)
	}
	code, _, errOut = runCLI(t, nil, append(append(slices.Clone(base), "--redis-allow-eviction"), site.URL+"/")...)
	if code != exitOK {
		t.Errorf("with --redis-allow-eviction: exit %d, want 0; stderr:\n%s", code, errOut)
	}
}

// A password the server refuses is reported with the server and the flag; before, the message
// was go-redis's WRONGPASS alone.
func TestARefusedRedisPasswordNamesTheServerAndTheFlag(t *testing.T) {
	srv := redistest.Start(t)
	if err := srv.Client().ConfigSet(context.Background(), "requirepass", "right").Err(); err != nil {
		t.Fatal(err)
	}
	site, requests := countingSite(t)
	args := append(append([]string{"crawl", "--redis", "redis://:wrong-pass@" + srv.Addr + "/0", "--no-cache"}, identityArgs...), site.URL+"/")
	code, out, errOut := runCLI(t, nil, args...)
	if code != exitNo {
		t.Errorf("exit %d, want 1; stderr:\n%s", code, errOut)
	}
	for _, want := range []string{"--redis redis://:xxxxx@" + srv.Addr, "WRONGPASS"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr does not say %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(out+errOut, "wrong-pass") {
		t.Errorf("the password appears in the output:\n%s", errOut)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the site received %d requests, want none", n)
	}
}

// Running a crawl again while its keys last finds every start URL accepted: it says so and how
// to crawl again; before, it exited 1 saying "the lines on stdout say why" with nothing on stdout.
func TestRunningAFinishedCrawlAgainSaysWhyNothingIsFetched(t *testing.T) {
	srv := redistest.Start(t)
	site, requests := countingSite(t)
	args := append(append([]string{"crawl", "--redis", srv.URL(), "--redis-prefix", "again:", "--no-cache", "--no-discovery"},
		identityArgs...), site.URL+"/")
	if code, _, errOut := runCLI(t, nil, args...); code != exitOK {
		t.Fatalf("first run: exit %d; stderr:\n%s", code, errOut)
	}
	before := requests.Load()
	code, _, errOut := runCLI(t, nil, args...)
	if code != exitNo {
		t.Errorf("second run: exit %d, want 1", code)
	}
	if strings.Contains(errOut, "the lines on stdout say why") || !strings.Contains(errOut, "--redis-prefix") ||
		!strings.Contains(errOut, "already accepted") {
		t.Errorf("second run: stderr does not say the crawl already accepted its start URLs and how to crawl again:\n%s", errOut)
	}
	if n := requests.Load() - before; n != 0 {
		t.Errorf("the second run sent %d requests, want none", n)
	}
}

// Any --redis value gives a client or a usage error — never a panic — and a refused value's
// message does not carry its password.
func FuzzRedisURL(f *testing.F) {
	for _, s := range []string{"redis://127.0.0.1:6379/0", "redis://:pw@h:1?addr=h:2&addr=h:3", "redis://a:1,b:2",
		"rediss://u:pw@h:1/15", "redis://h:1?addr=", "redis://h:1?addr=h:2&dial_timeout=x", "unix:///tmp/r.sock", "%zz", "redis://:s3cret@a:1,b:2", "redis://u:s3cret@h:1?addr=h:2&bogus=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := redisClient("--redis", s)
		if err != nil {
			if strings.Contains(s, ":s3cret@") && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error for %q carries the password: %v", s, err)
			}
			return
		}
		c.Close()
	})
}
