package main

// This file decides how many connections and file descriptors a crawl may hold, and what it says
// when the process runs out of descriptors anyway.

import (
	"errors"
	"net/http"
	"syscall"
	"time"
)

// idleConnTimeout is how long a connection nobody uses stays open. An origin being crawled starts
// a request every 380 ms at the default rate and reuses its connection; an origin the crawl is
// done with gives its descriptors back within this time.
const idleConnTimeout = 5 * time.Second

// crawlTransport is the door's base transport for a crawl with workers requests in progress at
// once and at most concurrency per host: a connection per request in flight and, kept for reuse,
// at most workers idle connections in all (concurrency per host), each closed after
// idleConnTimeout. So the crawl's sockets stay near twice --workers however many origins it
// visits; net/http's defaults would keep 100 idle connections for 90 s.
func crawlTransport(workers, concurrency int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	// No dialer of ours: the door's private-network guard dials with its own, which checks the
	// address before connecting.
	t.DialContext, t.Dial = nil, nil
	t.MaxConnsPerHost = concurrency // the host clock lets no more requests start on one host
	t.MaxIdleConnsPerHost = min(concurrency, workers)
	t.MaxIdleConns = workers
	t.IdleConnTimeout = idleConnTimeout
	return t
}

// outOfDescriptors reports whether err is the process (EMFILE) or the system (ENFILE) running out
// of file descriptors: a failure of this machine, not of the site.
func outOfDescriptors(err error) bool {
	return err != nil && (errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE))
}
