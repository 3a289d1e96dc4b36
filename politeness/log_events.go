package politeness

// This file decides what of the event stream reaches the log, and at which level.

import (
	"context"
	"log/slog"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/hostclock"
)

// logEvents turns the event stream into slog records at eventLevel's levels.
func logEvents(l *slog.Logger) func(events.Event) {
	return func(e events.Event) {
		level := eventLevel(e)
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

// eventLevel is the level an event is logged at. A door without Policy.Logger logs warnings only
// (quietlog), so the levels decide what a scraper's user sees unasked:
//   - Warn: what changes a crawl's results beyond the one request, which nobody else reports to
//     the user — a host given up for the crawl, a redirect into the private network, a body cut
//     at its cap, a weakened collector, a backlog of waiting requests, a damaged cache entry;
//   - Info: the site's steering (a pause for Retry-After or backoff, a slowdown for its response
//     time) and the refusal of one URL, which the caller also gets as the request's error;
//   - Debug: everything per request — admitted, waited (rate, Crawl-delay, …), retried, the
//     response and its cache outcome, a request stopped by its caller, a refused cookie.
func eventLevel(e events.Event) slog.Level {
	switch e.Type {
	case events.Paused:
		if e.Reason == hostclock.ReasonGiveUp {
			return slog.LevelWarn
		}
		return slog.LevelInfo
	case events.Refused:
		switch e.Reason {
		case "private-network":
			return slog.LevelWarn
		case "stopped":
			return slog.LevelDebug
		}
		return slog.LevelInfo
	case events.Notice:
		switch e.Reason {
		case cookieRefused:
			return slog.LevelDebug
		case hostclock.ReasonLatency:
			return slog.LevelInfo
		}
		return slog.LevelWarn
	}
	return slog.LevelDebug
}
