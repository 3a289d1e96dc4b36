package cache

// This file asks the origin whether a stored response is still good (RFC 9111 §4.3) and decides
// what an answer, or its absence, does to the stored copy: a 304 refreshes it, an error leaves it
// in place and may serve it stale (RFC 5861 §4, RFC 9111 §4.2.4).

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/freshness"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// revalidate asks the origin about the stored response e, sending both validators it has. The
// stored response is never removed here: an error or an error status leaves it (and its
// validators) in place for the next attempt.
func (t *Transport) revalidate(req *http.Request, key string, e *Entry, rcc freshness.Directives) (*http.Response, error) {
	creq := req.Clone(req.Context())
	etag, lm := e.Header.Get("ETag"), e.Header.Get("Last-Modified")
	if etag != "" {
		creq.Header.Set("If-None-Match", etag)
	}
	if lm != "" {
		creq.Header.Set("If-Modified-Since", lm)
	}
	conditional := etag != "" || lm != ""

	reqTime := t.o.Now()
	resp, err := t.next.RoundTrip(creq)
	if err != nil {
		disconnected := req.Context().Err() == nil
		if r := t.staleOnError(req, key, e, rcc, disconnected); r != nil {
			t.log.Debug("cache: serving stale after an error", "url", req.URL.String(), "err", err)
			return r, nil
		}
		return nil, err
	}
	respTime := t.o.Now()

	switch {
	case resp.StatusCode == http.StatusNotModified && conditional:
		drain(resp.Body)
		merged := mergeNotModified(e, t.storedFields(resp.Header), reqTime, respTime)
		if err := t.update(key, merged); err != nil {
			t.log.Debug("cache: updating after 304 failed", "key", key, "err", err)
		}
		if ne, body, err := t.store.Get(key); err == nil {
			return t.serve(req, ne, body, Revalidated, respTime), nil
		}
		// The stored body vanished between the 304 and now (evicted, or removed by another
		// process): ask again without validators rather than serve nothing.
		return t.fetch(req)
	case isErrorStatus(resp.StatusCode):
		if r := t.staleOnError(req, key, e, rcc, false); r != nil {
			drain(resp.Body)
			return r, nil
		}
		// Not stored over the good copy: the validators survive for the next attempt.
		return t.passedOn(resp), nil
	case req.Method == http.MethodHead:
		return t.passedOn(resp), nil
	}
	return t.keep(req, resp, reqTime, respTime), nil
}

// passedOn reports a response the cache hands on without storing it as a miss.
func (t *Transport) passedOn(resp *http.Response) *http.Response {
	resp.Header.Del(StatusHeader)
	resp.Header.Del(ReasonHeader)
	resp.Header.Set(StatusHeader, Miss)
	t.miss.Add(1)
	return resp
}

func isErrorStatus(code int) bool {
	switch code {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// staleOnError serves e stale when stale-if-error (the response's, the request's, or
// Options.StaleIfError) or, for an origin that cannot be reached, Options.StaleOnDisconnect
// covers its staleness, and must-revalidate / no-cache do not forbid it. This is also how a
// robots.txt older than a day is still used while its origin is unreachable (RFC 9309 §2.4).
func (t *Transport) staleOnError(req *http.Request, key string, e *Entry, rcc freshness.Directives, disconnected bool) *http.Response {
	cc := freshness.CacheControl(e.Header)
	if cc.Has("must-revalidate") || cc.Has("no-cache") {
		return nil
	}
	now := t.o.Now()
	r := e.response()
	staleness := r.Age(now) - t.lifetime(req, r, cc)
	allowed := t.o.StaleIfError
	if disconnected {
		allowed = max(allowed, t.o.StaleOnDisconnect)
	}
	if d, ok := cc.Seconds("stale-if-error"); ok {
		allowed = max(allowed, d)
	}
	if d, ok := rcc.Seconds("stale-if-error"); ok {
		allowed = max(allowed, d)
	}
	if allowed <= 0 || staleness > allowed {
		return nil
	}
	ne, body, err := t.store.Get(key)
	if err != nil {
		return nil
	}
	return t.serve(req, ne, body, Stale, now)
}

// mergeNotModified applies a 304's header fields to the stored response (RFC 9111 §3.2, §4.3.4):
// every field replaces the stored one, except Content-Length (it describes the 304, not the
// stored body) and the fields that are never stored. The exchange's times replace the stored
// ones, so the age starts again from the 304. h holds the 304's stored fields
// (Transport.storedFields).
func mergeNotModified(e *Entry, h http.Header, reqTime, respTime time.Time) *Entry {
	m := e.clone()
	upd := h.Clone()
	upd.Del("Content-Length")
	for n, v := range upd {
		m.Header[n] = v
	}
	if len(h.Values("Age")) == 0 {
		m.Header.Del("Age")
	}
	if len(h.Values("Date")) == 0 {
		m.Header.Set("Date", respTime.UTC().Format(http.TimeFormat))
	}
	m.RequestTime, m.ResponseTime = reqTime, respTime
	return m
}

// update replaces the metadata stored under key, through [Updater] when the store has it, else by
// streaming the body into a new entry.
func (t *Transport) update(key string, e *Entry) error { return UpdateEntry(t.store, key, e) }

// revalidateInBackground runs one revalidation of key at a time, detached from the caller's
// context (which ends when the caller has its stale response) but bounded by a minute.
func (t *Transport) revalidateInBackground(req *http.Request, key string, e *Entry, rcc freshness.Directives) {
	if _, busy := t.inflight.LoadOrStore(key, true); busy {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(req.Context()), time.Minute)
	breq := req.Clone(ctx)
	go func() {
		defer t.inflight.Delete(key)
		defer cancel()
		resp, err := t.revalidate(breq, key, e, rcc)
		if err != nil {
			t.log.Debug("cache: background revalidation failed", "url", req.URL.String(), "err", err)
			return
		}
		// Reading to EOF commits a new full response to the store.
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		// No caller reads this response, so the door's report layer never sees it: report it
		// here, so the operator's cost is counted all the same.
		budget, _ := origin.BudgetKey(req.URL)
		t.o.Events.Emit(events.Event{Type: events.Response, URL: req.URL.String(), Origin: budget,
			Kind: kind.FromContext(req.Context()), Method: req.Method, Status: resp.StatusCode,
			Cache: StatusOf(resp), Bytes: n, Detail: "background revalidation (stale-while-revalidate)"})
	}()
}
