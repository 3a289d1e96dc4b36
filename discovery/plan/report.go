package plan

// This file decides what the planner reports of each document it requests: one Document per
// request, when its body is closed (or at once, without a response), whichever package — this
// one, discovery/wprest — sent the request.

import (
	"context"
	"io"
	"net/http"
	"sync"

	"github.com/politecrawl/etiquette/politeness/kind"
)

type viaKey struct{}

// withVia marks the requests sent with ctx as discovery documents found via via.
func withVia(ctx context.Context, via string) context.Context {
	return context.WithValue(ctx, viaKey{}, via)
}

// observed returns a client like c whose requests marked withVia are reported to report.
func observed(c *http.Client, report func(Document)) *http.Client {
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	return &http.Client{Transport: &observer{next: next, report: report}, CheckRedirect: c.CheckRedirect, Jar: c.Jar, Timeout: c.Timeout}
}

// observer reports each document request that passes it. The client calls it once per redirect
// hop; a hop answered with a redirect the client follows is not a document of its own, so only
// the last response is reported, under the URL first requested.
type observer struct {
	next   http.RoundTripper
	report func(Document)
}

func (o *observer) RoundTrip(req *http.Request) (*http.Response, error) {
	via, ok := req.Context().Value(viaKey{}).(string)
	if !ok {
		return o.next.RoundTrip(req)
	}
	first := req
	for first.Response != nil && first.Response.Request != nil {
		first = first.Response.Request
	}
	d := Document{URL: first.URL.String(), Kind: kind.Of(req), FoundVia: via}
	resp, err := o.next.RoundTrip(req)
	if err != nil {
		d.Err = err
		o.report(d)
		return nil, err
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Header.Get("Location") != "" {
		return resp, nil
	}
	d.Status, d.FinalURL = resp.StatusCode, req.URL.String()
	resp.Body = &observedBody{r: resp.Body, doc: d, report: o.report}
	return resp, nil
}

// observedBody counts what is read of a document's body and reports the document on Close.
type observedBody struct {
	r      io.ReadCloser
	report func(Document)

	mu     sync.Mutex
	doc    Document
	closed bool
}

func (b *observedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.mu.Lock()
	b.doc.Bytes += int64(n)
	if err != nil && err != io.EOF && b.doc.Err == nil {
		b.doc.Err = err
	}
	b.mu.Unlock()
	return n, err
}

func (b *observedBody) Close() error {
	err := b.r.Close()
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return err
	}
	b.closed = true
	d := b.doc
	b.mu.Unlock()
	b.report(d)
	return err
}

// noteError records why a document yielded less than it could — a reader's error — on the
// report its body will make when closed. The first error noted wins.
func noteError(resp *http.Response, err error) {
	b, ok := resp.Body.(*observedBody)
	if !ok || err == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.doc.Err == nil {
		b.doc.Err = err
	}
}
