package plan

// This file decides what every discovery request passes on its way out, whichever package — this
// one, discovery/wprest — sent it: the crawl's document budget, a unit of its requests in flight
// (held until the body is closed), the rule every discovered URL passes for each redirect hop;
// and what the planner reports of it: one Document per request, when its body is closed (or at
// once, without a response).

import (
	"context"
	"io"
	"net/http"
	"sync"

	"github.com/politecrawl/etiquette/politeness"
	"github.com/politecrawl/etiquette/politeness/kind"
)

type docKey struct{}

// docMark is what a discovery request carries in its context.
type docMark struct {
	via    string // how the document was found: a frontier.Via value
	origin string // the origin being discovered, for Summary.Limits
	// release, when set, gives back the unit of Config.InFlight the caller took before sending
	// the request (see originPlan.get): the hops take none, and the first body closed gives it
	// back. It must be safe to call more than once.
	release func()
}

// withVia marks the requests sent with ctx as discovery documents of origin, found via via, named
// by the document (or page) at namedBy: the door then keeps them out of private networks when
// namedBy is on a public address (politeness.NamedBy).
func withVia(ctx context.Context, origin, via, namedBy string) context.Context {
	return politeness.NamedBy(context.WithValue(ctx, docKey{}, docMark{via: via, origin: origin}), namedBy)
}

// observed returns a client like c whose requests marked withVia pass the planner's bounds and
// are reported to it.
func observed(c *http.Client, p *Planner) *http.Client {
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	return &http.Client{Transport: &observer{next: next, p: p}, CheckRedirect: c.CheckRedirect, Jar: c.Jar, Timeout: c.Timeout}
}

// observer bounds and reports each document request that passes it. The client calls it once
// per redirect hop, and closes a hop's body before it sends the next, so each hop holds a unit
// of Config.InFlight of its own; a hop answered with a redirect the client follows is not a
// document of its own, so only the last response is reported, under the URL first requested,
// and the document budget is taken once, by the first hop.
type observer struct {
	next http.RoundTripper
	p    *Planner
}

func (o *observer) RoundTrip(req *http.Request) (*http.Response, error) {
	m, ok := req.Context().Value(docKey{}).(docMark)
	if !ok {
		return o.next.RoundTrip(req)
	}
	p := o.p
	first := req
	for first.Response != nil && first.Response.Request != nil {
		first = first.Response.Request
	}
	d := Document{URL: first.URL.String(), Kind: kind.Of(req), FoundVia: m.via}
	if req.Response != nil {
		// A redirect names its target: the target passes the rule as any discovered URL does.
		if err := p.reach.Check(req.Response.Request.URL.String(), req.URL.String(), false); err != nil {
			p.refused(m.origin, req.URL.String(), err)
			d.Err = err
			p.reportDocument(d)
			return nil, err
		}
	} else if !p.docs.take() {
		p.refused(m.origin, req.URL.String(), ErrMaxDocuments)
		return nil, ErrMaxDocuments
	}
	release := p.release
	if m.release != nil {
		// The caller's unit, given back once: by the first body closed — a hop's, when the
		// client follows a redirect (the next hops then go without one, rather than the unit
		// staying taken when the client hands the redirect itself back), else the document's.
		release = m.release
	} else if err := p.acquire(req.Context()); err != nil {
		return nil, err
	}
	resp, err := o.next.RoundTrip(req)
	if err != nil {
		release()
		p.refused(m.origin, req.URL.String(), err)
		d.Err = err
		p.reportDocument(d)
		return nil, err
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Header.Get("Location") != "" {
		resp.Body = &releasingBody{ReadCloser: resp.Body, release: release}
		return resp, nil
	}
	d.Status, d.FinalURL = resp.StatusCode, req.URL.String()
	resp.Body = &observedBody{r: resp.Body, doc: d, report: p.reportDocument, release: release}
	return resp, nil
}

// releasingBody gives the request's unit of Config.InFlight back when it is closed, once.
type releasingBody struct {
	io.ReadCloser
	release func()
	once    sync.Once
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}

// observedBody counts what is read of a document's body and, on Close, gives the request's unit
// of Config.InFlight back and reports the document.
type observedBody struct {
	r       io.ReadCloser
	report  func(Document)
	release func()

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
	b.release()
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
