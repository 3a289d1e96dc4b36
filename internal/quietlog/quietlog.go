// Package quietlog is the logger etiquette's parts use when their caller gave them none: slog's
// default logger, warnings and errors only. A library must not fill its user's output with a
// line per request; what a user did not ask for is what an operator must act on (a host given
// up, a body cut), and the per-request lines go to a logger the user passes.
package quietlog

import (
	"context"
	"log/slog"
)

// Logger returns a logger that passes records at slog.LevelWarn and above to slog.Default(), as
// it is when the record is logged (a later slog.SetDefault takes effect), and drops the rest.
func Logger() *slog.Logger { return slog.New(handler{}) }

// Or returns l, or Logger() when l is nil.
func Or(l *slog.Logger) *slog.Logger {
	if l != nil {
		return l
	}
	return Logger()
}

// handler filters by level and hands on to the default logger's handler. It keeps the attributes
// and groups added to it as steps to replay on that handler, because the default may change
// between the With call and the record.
type handler struct {
	steps []func(slog.Handler) slog.Handler
}

func (h handler) Enabled(ctx context.Context, l slog.Level) bool {
	t := target()
	return l >= slog.LevelWarn && t != nil && t.Enabled(ctx, l)
}

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	t := target()
	if t == nil {
		return nil
	}
	for _, step := range h.steps {
		t = step(t)
	}
	return t.Handle(ctx, r)
}

func (h handler) WithAttrs(as []slog.Attr) slog.Handler {
	return h.with(func(t slog.Handler) slog.Handler { return t.WithAttrs(as) })
}

func (h handler) WithGroup(name string) slog.Handler {
	return h.with(func(t slog.Handler) slog.Handler { return t.WithGroup(name) })
}

func (h handler) with(step func(slog.Handler) slog.Handler) handler {
	return handler{steps: append(h.steps[:len(h.steps):len(h.steps)], step)}
}

// target is the default logger's handler, or nil when it is this package's own: after
// slog.SetDefault(quietlog.Logger()) a record would otherwise go round in circles.
func target() slog.Handler {
	t := slog.Default().Handler()
	if _, self := t.(handler); self {
		return nil
	}
	return t
}
