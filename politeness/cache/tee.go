package cache

// This file writes a storable response into the store while the caller reads it: the entry is
// committed when the body reaches its end, and discarded if it fails or is closed early.

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
)

// keep reports resp as a miss and, when it is storable, tees its body into the store as the
// caller reads it.
func (t *Transport) keep(req *http.Request, resp *http.Response, reqTime, respTime time.Time) *http.Response {
	resp.Header.Del(StatusHeader)
	resp.Header.Del(ReasonHeader)
	t.miss.Add(1)
	if storable(req, resp) {
		if w := t.startPut(req, resp, reqTime, respTime); w != nil {
			resp.Body = &teeBody{rc: resp.Body, w: w, log: t.log}
		}
	}
	resp.Header.Set(StatusHeader, Miss)
	return resp
}

// startPut writes the Vary index when the response varies and opens the body writer.
func (t *Transport) startPut(req *http.Request, resp *http.Response, reqTime, respTime time.Time) BodyWriter {
	e := &Entry{Status: resp.StatusCode, Header: t.storedFields(resp.Header), RequestTime: reqTime, ResponseTime: respTime,
		Size: resp.ContentLength}
	key := primaryKey(req.URL)
	names, _ := varyFields(resp.Header)
	if len(names) > 0 {
		e.VaryValues = map[string]string{}
		for _, n := range names {
			e.VaryValues[n] = varyValue(req.Header, n)
		}
		gen, err := t.varyIndex(key, names)
		if err != nil {
			t.log.Debug("cache: storing a Vary index failed", "key", key, "err", err)
			return nil
		}
		key = variantKey(key, gen, names, req.Header)
	}
	w, err := t.store.Put(key, e)
	if err != nil {
		if !errors.Is(err, ErrTooLarge) {
			t.log.Debug("cache: store write failed", "key", key, "err", err)
		}
		return nil
	}
	return w
}

// varyIndex makes sure the primary key holds a Vary index for the Vary fields names and returns
// its generation. An index with the same fields is reused, so several variants live side by side.
func (t *Transport) varyIndex(key string, names []string) (string, error) {
	if old, body, err := t.store.Get(key); err == nil {
		body.Close()
		oldNames, _ := varyFields(old.Header)
		if old.Status == 0 && slices.Equal(oldNames, names) {
			return old.Variant, nil
		}
	}
	gen := randomHex()
	idx := &Entry{Header: http.Header{"Vary": {strings.Join(names, ", ")}}, Variant: gen}
	w, err := t.store.Put(key, idx)
	if err != nil {
		return "", err
	}
	return gen, w.Commit()
}

// teeBody copies a response body into the store while the caller reads it; the entry is committed
// at EOF and discarded if the body fails or is closed early.
type teeBody struct {
	rc  io.ReadCloser
	w   BodyWriter
	log *slog.Logger
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 && b.w != nil {
		if _, werr := b.w.Write(p[:n]); werr != nil {
			b.w.Abort()
			b.w = nil
		}
	}
	if err != nil && b.w != nil {
		if err == io.EOF {
			if cerr := b.w.Commit(); cerr != nil && !errors.Is(cerr, ErrTooLarge) {
				b.log.Debug("cache: committing an entry failed", "err", cerr)
			}
		} else {
			b.w.Abort()
		}
		b.w = nil
	}
	return n, err
}

func (b *teeBody) Close() error {
	if b.w != nil {
		b.w.Abort()
		b.w = nil
	}
	return b.rc.Close()
}
