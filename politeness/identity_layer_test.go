package politeness

import (
	"net/http"
	"strings"
	"testing"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
)

func TestIdentityLayer(t *testing.T) {
	const agent = "ExampleBot/1.0 (+https://example.org/bot; mailto:bot@example.org)"
	tests := []struct {
		name       string
		from       string      // the configured contact; "" when none
		header     http.Header // what the caller (a Colly callback) set
		marked     kind.Kind   // the kind in the request's context, if any
		wantFrom   string
		wantAccept string
		wantKind   kind.Kind
	}{
		{name: "a browser User-Agent and Colly's Accept are replaced",
			from: "bot@example.org", header: http.Header{"User-Agent": {"Mozilla/5.0"}, "Accept": {"*/*"}},
			wantFrom: "bot@example.org", wantAccept: kind.HTML.Accept(), wantKind: kind.HTML},
		{name: "a callback's From is replaced by the contact",
			from: "bot@example.org", header: http.Header{"From": {"someone@else.example"}},
			wantFrom: "bot@example.org", wantAccept: kind.HTML.Accept(), wantKind: kind.HTML},
		{name: "without a contact a callback's From is not sent",
			header:   http.Header{"From": {"someone@else.example"}},
			wantFrom: "", wantAccept: kind.HTML.Accept(), wantKind: kind.HTML},
		{name: "the private kind header becomes the context's kind and Accept",
			header:   http.Header{kind.Header: {"sitemap"}, "X-Etiquette-Other": {"x"}},
			wantFrom: "", wantAccept: kind.Sitemap.Accept(), wantKind: kind.Sitemap},
		{name: "the context's kind wins over the header",
			header: http.Header{kind.Header: {"sitemap"}}, marked: kind.Feed,
			wantFrom: "", wantAccept: kind.Feed.Accept(), wantKind: kind.Feed},
		{name: "an Accept the caller chose is kept",
			header:   http.Header{"Accept": {"application/ld+json"}, kind.Header: {"api"}},
			wantFrom: "", wantAccept: "application/ld+json", wantKind: kind.API},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := &recorder{}
			req, _ := http.NewRequest(http.MethodGet, "https://example.org/a", nil)
			req.Header = tt.header.Clone()
			if tt.marked != "" {
				req = kind.Mark(req, tt.marked)
			}
			before := req.Header.Clone()
			if _, err := identityLayer(next, agent, tt.from, events.Discard).RoundTrip(req); err != nil {
				t.Fatal(err)
			}
			out := next.last()
			if got := out.Header.Get("User-Agent"); got != agent {
				t.Errorf("User-Agent %q, want %q", got, agent)
			}
			if got := out.Header.Values("From"); tt.wantFrom == "" && len(got) != 0 || tt.wantFrom != "" && (len(got) != 1 || got[0] != tt.wantFrom) {
				t.Errorf("From %q, want %q", got, tt.wantFrom)
			}
			if got := out.Header.Get("Accept"); got != tt.wantAccept {
				t.Errorf("Accept %q, want %q", got, tt.wantAccept)
			}
			for name := range out.Header {
				if strings.HasPrefix(http.CanonicalHeaderKey(name), "X-Etiquette-") {
					t.Errorf("private header %s left the layer", name)
				}
			}
			if got := kind.FromContext(out.Context()); got != tt.wantKind {
				t.Errorf("kind %q in the context, want %q", got, tt.wantKind)
			}
			if len(req.Header) != len(before) || req.Header.Get("User-Agent") != before.Get("User-Agent") {
				t.Errorf("the caller's request was modified: %v, was %v", req.Header, before)
			}
		})
	}
}

// A User-Agent the caller chose is replaced, and said once per layer (per door) as a Notice
// naming both; the identity itself, or no User-Agent, is nothing to say.
func TestIdentityLayerSaysOnceWhenItReplacesTheCallersAgent(t *testing.T) {
	const agent = "ExampleBot/1.0 (+https://example.org/bot)"
	var bus events.Bus
	var notices []events.Event
	bus.Subscribe(func(e events.Event) { notices = append(notices, e) })
	layer := identityLayer(&recorder{}, agent, "", &bus)
	for _, ua := range []string{"", agent, "Mozilla/5.0 (X11)", "Other/1.0", "Mozilla/5.0 (X11)"} {
		req, _ := http.NewRequest(http.MethodGet, "https://example.org/a", nil)
		if ua != "" {
			req.Header.Set("User-Agent", ua)
		}
		if _, err := layer.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}
	if len(notices) != 1 {
		t.Fatalf("%d notices, want one: %+v", len(notices), notices)
	}
	if n := notices[0]; n.Type != events.Notice || n.Reason != agentReplaced ||
		!strings.Contains(n.Detail, `"Mozilla/5.0 (X11)"`) || !strings.Contains(n.Detail, agent) {
		t.Errorf("notice %+v, want one naming the caller's agent and the identity", n)
	}
}
