package politeness

// This file decides what of the event stream reaches the log, and at which level.

import (
	"context"
	"log/slog"

	"github.com/politecrawl/etiquette/politeness/events"
)

// logEvents turns the event stream into slog records: refusals, pauses and notices at Info or
// Warn (an operator wants them), everything per request at Debug.
func logEvents(l *slog.Logger) func(events.Event) {
	return func(e events.Event) {
		level := slog.LevelDebug
		switch e.Type {
		case events.Refused, events.Paused:
			level = slog.LevelInfo
		case events.Notice:
			level = slog.LevelWarn
			if e.Reason == cookieRefused {
				level = slog.LevelDebug
			}
		}
		if !l.Enabled(context.Background(), level) {
			return
		}
		attrs := []slog.Attr{slog.String("event", string(e.Type)), slog.String("url", e.URL), slog.String("origin", e.Origin), slog.String("kind", string(e.Kind))}
		if e.Status != 0 {
			attrs = append(attrs, slog.Int("status", e.Status))
		}
		if e.Cache != "" {
			attrs = append(attrs, slog.String("cache", e.Cache))
		}
		if e.Reason != "" {
			attrs = append(attrs, slog.String("reason", e.Reason))
		}
		if e.Detail != "" {
			attrs = append(attrs, slog.String("detail", e.Detail))
		}
		if e.Wait != 0 {
			attrs = append(attrs, slog.Duration("wait", e.Wait))
		}
		if !e.Until.IsZero() {
			attrs = append(attrs, slog.Time("until", e.Until))
		}
		if e.Type == events.Response {
			attrs = append(attrs, slog.Int64("bytes", e.Bytes))
		}
		l.LogAttrs(context.Background(), level, "etiquette "+string(e.Type), attrs...)
	}
}
