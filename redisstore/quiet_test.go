package redisstore_test

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/politecrawl/etiquette/redisstore"
	"github.com/politecrawl/etiquette/redisstore/redistest"
)

// TestStoreWithoutLoggerIsQuiet: a store built without Options.Logger does not put a site's
// pause on its user's output, however verbose the default logger is; warnings only. (slog's
// default logger is process-wide: this test must not run in parallel.)
func TestStoreWithoutLoggerIsQuiet(t *testing.T) {
	srv := redistest.Start(t)
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(old) })

	st, err := redisstore.New(srv.Client(), redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.Clock().Pause("a.test", time.Now().Add(time.Minute), "retry-after")
	if _, why, _ := st.Clock().PausedUntil("a.test"); why != "retry-after" {
		t.Fatalf("the pause was not recorded (reason %q)", why)
	}
	if buf.Len() > 0 {
		t.Errorf("a store without Options.Logger logged on slog's default logger:\n%s", buf.String())
	}
}
