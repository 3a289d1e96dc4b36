package redistest_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/politecrawl/etiquette/redisstore/redistest"
)

func TestAServerAnswersStopsAndComesBackWithItsData(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client()
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET on a started server: %v", err)
	}

	srv.Stop()
	if err := c.Ping(ctx).Err(); err == nil {
		t.Fatal("PING succeeded on a stopped server")
	}

	srv.Restart()
	got, err := c.Get(ctx, "k").Result()
	if err != nil || got != "v" {
		t.Fatalf("after Restart: GET k = %q, %v; want the value saved before Stop", got, err)
	}
}

func TestTwoServersDoNotShareAPortOrData(t *testing.T) {
	a, b := redistest.Start(t), redistest.Start(t)
	if a.Addr == b.Addr {
		t.Fatalf("both servers on %s", a.Addr)
	}
	ctx := context.Background()
	if err := a.Client().Set(ctx, "k", "a", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Client().Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Fatalf("the second server sees the first one's key (%d, %v)", n, err)
	}
}

// fatalTB records Fatalf and stops the calling goroutine, as testing.T does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestWithoutRedisServerTheFailureSaysHowToInstallIt(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	f := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		redistest.Start(f)
	}()
	<-done
	if !strings.Contains(f.msg, "apt-get install redis-server") {
		t.Fatalf("failure message %q does not say how to install redis-server", f.msg)
	}
}
