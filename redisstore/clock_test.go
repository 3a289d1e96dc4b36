package redisstore_test

import (
	"log/slog"
	"testing"

	"github.com/politecrawl/etiquette/politeness/hostclock"
	"github.com/politecrawl/etiquette/politeness/hostclock/clocktest"
	"github.com/politecrawl/etiquette/redisstore"
	"github.com/politecrawl/etiquette/redisstore/redistest"
)

// The behaviour table hostclock.Local passes, against the clock shared through Redis.
func TestRedisClockPassesTheClockTable(t *testing.T) {
	srv := redistest.Start(t)
	clocktest.Run(t, func(t *testing.T, cfg hostclock.Config) hostclock.Clock {
		return newStore(t, srv, redisstore.Options{Clock: cfg}).Clock()
	})
}

// newStore returns a store on srv with its own client, closed when the test ends.
func newStore(t *testing.T, srv *redistest.Server, opts redisstore.Options) *redisstore.Store {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	st, err := redisstore.New(srv.Client(), opts)
	if err != nil {
		t.Fatalf("redisstore.New: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
