package politeness

// This file decides when a response body counts as finished for the layers that wait for it.

import (
	"io"
	"sync"
	"sync/atomic"
)

// bodyEnd is told once that a watched body is finished, with the bytes read and the read error
// (nil at EOF or on Close).
type bodyEnd interface {
	bodyEnded(n int64, err error)
}

// watchedBody passes a response body through and tells end when the body is read to its end,
// fails or is closed — whichever comes first. Read and Close may be called from different
// goroutines.
type watchedBody struct {
	rc   io.ReadCloser
	n    atomic.Int64
	once sync.Once
	end  bodyEnd
}

func watchBody(rc io.ReadCloser, end bodyEnd) *watchedBody {
	return &watchedBody{rc: rc, end: end}
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.n.Add(int64(n))
	if err != nil {
		if err == io.EOF {
			b.finish(nil)
		} else {
			b.finish(err)
		}
	}
	return n, err
}

func (b *watchedBody) Close() error {
	err := b.rc.Close()
	b.finish(nil)
	return err
}

func (b *watchedBody) finish(err error) {
	b.once.Do(func() { b.end.bodyEnded(b.n.Load(), err) })
}
