package quietlog

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestPassesWarningsToTheDefaultOfTheMoment: Info and Debug are dropped, Warn and Error reach
// slog's default logger — the one set when the record is logged — with the attributes and groups
// added before. slog.SetDefault is process-wide: no test here runs in parallel.
func TestPassesWarningsToTheDefaultOfTheMoment(t *testing.T) {
	old := slog.Default()
	t.Cleanup(func() { slog.SetDefault(old) })
	l := Logger().With("part", "cache").WithGroup("g")

	var buf bytes.Buffer
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	l.Debug("d")
	l.Info("i")
	l.Warn("w", "k", 1)
	l.Error("e")
	got := buf.String()
	if strings.Contains(got, "msg=d") || strings.Contains(got, "msg=i") {
		t.Errorf("debug or info passed:\n%s", got)
	}
	if !strings.Contains(got, `level=WARN msg=w part=cache g.k=1`) || !strings.Contains(got, "level=ERROR msg=e") {
		t.Errorf("warning or error missing, or without its attributes:\n%s", got)
	}

	slog.SetDefault(Logger()) // pointing the default at itself must not loop
	Logger().Warn("nowhere")
	if Or(nil) == nil || Or(old) != old {
		t.Error("Or: want the given logger, else a quiet one")
	}
}
