package dropin_test

// This file holds the parts the programs' sites are built from beyond etiquettetest's own: pages
// written by hand, a page that shows the request's headers, a forward proxy, an address nothing
// listens on, and a Colly debugger that records events without their timing.

import (
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"

	"github.com/gocolly/colly/v2/debug"

	"github.com/politecrawl/etiquette/etiquettetest"
)

// htmlDoc is a 200 HTML answer with body as the inside of <body>.
func htmlDoc(title, body string) etiquettetest.Answer {
	return etiquettetest.Text("<!doctype html><html><head><title>" + html.EscapeString(title) +
		"</title></head><body>" + body + "</body></html>").ContentType("text/html; charset=utf-8")
}

// echoHeaders is a page that shows what the request carried: its User-Agent, Cookie, Referer,
// the proxy it came through (X-Via, set by forwardProxy) and, for a POST, its form — so the
// program that reads it prints what the site received.
func echoHeaders() etiquettetest.Answer {
	return etiquettetest.Func(func(r *http.Request) etiquettetest.Answer {
		var b strings.Builder
		for _, h := range []string{"User-Agent", "Cookie", "Referer", "X-Via"} {
			fmt.Fprintf(&b, "<p class=%q>%s</p>", strings.ToLower(h), html.EscapeString(r.Header.Get(h)))
		}
		if r.Method == http.MethodPost && r.ParseForm() == nil {
			for k := range r.PostForm {
				fmt.Fprintf(&b, "<p class=\"form\">%s=%s</p>", html.EscapeString(k), html.EscapeString(r.PostForm.Get(k)))
			}
		}
		return htmlDoc("echo", b.String())
	})
}

// forwardProxy starts a plain HTTP forward proxy on loopback that adds "X-Via: name" to every
// request it forwards, so the site's answer shows which proxy it came through. It refuses
// anything but an absolute-form request (a client that did not mean to use it).
func forwardProxy(r *run, name string) string {
	direct := &http.Transport{Proxy: nil}
	p := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, in *http.Request) {
		if !in.URL.IsAbs() {
			http.Error(w, "not a proxy request", http.StatusBadRequest)
			return
		}
		out := in.Clone(in.Context())
		out.RequestURI = ""
		out.Header.Set("X-Via", name)
		resp, err := direct.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	r.t.Cleanup(func() {
		p.Close()
		direct.CloseIdleConnections()
	})
	r.name(p.URL, name)
	return p.URL
}

// closedAddress returns http://host:port of a loopback port nothing listens on any more.
func closedAddress(r *run) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	r.must(err)
	u := "http://" + l.Addr().String()
	l.Close()
	r.name(u, "closed")
	return u
}

// eventLog is a Colly debugger that prints each event's type and URL, not its timing, so two
// runs compare.
type eventLog struct {
	r  *run
	mu sync.Mutex
}

var _ debug.Debugger = (*eventLog)(nil)

func (d *eventLog) Init() error { return nil }

func (d *eventLog) Event(e *debug.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.r.printf("debug %s %s", e.Type, e.Values["url"])
}

// textOf returns the text of the first <p class="key"> of an echoHeaders page, or of the first
// <key> element, unescaped; "" when there is none.
func textOf(body []byte, key string) string {
	re := regexp.MustCompile(`<p class="` + regexp.QuoteMeta(key) + `">(.*?)</p>|<` + regexp.QuoteMeta(key) + `>(.*?)</` + regexp.QuoteMeta(key) + `>`)
	m := re.FindSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(string(m[1]) + string(m[2]))
}

// sessionCookie is what the login example's site sets after a good login.
func sessionCookie() *http.Cookie {
	return &http.Cookie{Name: "session", Value: "s3cret", Path: "/", HttpOnly: true}
}
