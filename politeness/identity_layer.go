package politeness

// This file decides what every request says about itself: who sends it and what it is for.

import (
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/politecrawl/etiquette/politeness/events"
	"github.com/politecrawl/etiquette/politeness/kind"
	"github.com/politecrawl/etiquette/politeness/origin"
)

// agentReplaced is the Notice reason of a User-Agent the caller set that the identity replaced.
const agentReplaced = "user-agent-replaced"

// identityLayer sets on every request:
//   - exactly agent as the User-Agent, whatever a callback, colly.Headers or
//     extensions.RandomUserAgent set;
//   - From: from — or no From when from is empty: RFC 9110 §10.1.2 asks a robot to send a
//     contact address there, and without a configured contact a From a callback set is not sent
//     under the crawler's name;
//   - Accept: the kind's ([kind.Kind.Accept]) when the request has none or Colly's default "*/*";
//     an Accept the caller chose is kept.
//
// It reads the request's kind once ([kind.Of]: the context, else the private [kind.Header] a
// Colly callback set), carries it in the context for the layers below, and removes every private
// X-Etiquette-* header, so none leaves the process.
//
// It runs once per redirect hop: Go's client copies the original request's headers to each hop,
// not what a layer set, so nothing set on an earlier hop is relied on.
//
// The first request that arrives with a User-Agent other than agent — a caller's choice, such as
// a browser string — is a Notice on sink (reason "user-agent-replaced", logged at Warn) naming
// both, once per layer, i.e. per door: the caller's code keeps setting it, and it never goes
// out, so the caller hears it once rather than never or on every request.
func identityLayer(next http.RoundTripper, agent, from string, sink events.Sink) http.RoundTripper {
	// One value slice per header for every request, instead of one per request: net/http and
	// http.Header never write into a value slice, and a capacity of 1 makes an Add copy it.
	agentValue, fromValue := []string{agent}[:1:1], []string{from}[:1:1]
	accepts := map[kind.Kind][]string{}
	for _, k := range []kind.Kind{kind.Robots, kind.Sitemap, kind.LLMs, kind.Feed, kind.API, kind.HTML, kind.Other} {
		accepts[k] = []string{k.Accept()}[:1:1]
	}
	var told atomic.Bool
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if ua, chosen := callersAgent(req.Header, agent); chosen && !told.Load() && told.CompareAndSwap(false, true) {
			budget, _ := origin.BudgetKey(req.URL)
			sink.Emit(events.Event{Type: events.Notice, URL: req.URL.Redacted(), Origin: budget, Reason: agentReplaced,
				Detail: "the User-Agent " + strconv.Quote(ua) + " set by the caller is not sent: every request carries the crawler's identity " +
					strconv.Quote(agent) + " (Policy.Identity); remove the code that sets it (said once per door)"})
		}
		k := kind.Of(req)
		out := req.WithContext(kind.WithKind(req.Context(), k))
		out.Header = cloneHeader(req.Header, 3) // only the headers change; the rest is shared, as WithContext does
		// A URL of its own as well: Colly takes a response's Request for the request it sent only
		// when its URL pointer differs, and then shows the headers that really went out.
		u := *req.URL
		out.URL = &u
		for name := range out.Header {
			if strings.HasPrefix(http.CanonicalHeaderKey(name), "X-Etiquette-") {
				delete(out.Header, name)
			}
		}
		out.Header["User-Agent"] = agentValue
		if from != "" {
			out.Header["From"] = fromValue
		} else {
			delete(out.Header, "From")
		}
		if a := out.Header.Values("Accept"); len(a) == 0 || len(a) == 1 && strings.TrimSpace(a[0]) == "*/*" {
			accept, ok := accepts[k]
			if !ok {
				accept = []string{k.Accept()}
			}
			out.Header["Accept"] = accept
		}
		return next.RoundTrip(out)
	})
}

// callersAgent returns the User-Agent h carries when it is one the caller chose: present,
// not empty and not agent.
func callersAgent(h http.Header, agent string) (string, bool) {
	ua := h["User-Agent"]
	if len(ua) == 0 || len(ua) == 1 && (ua[0] == agent || ua[0] == "") {
		return "", false
	}
	return strings.Join(ua, ", "), true
}

// cloneHeader is http.Header.Clone with room for extra more names (so that setting User-Agent,
// From and Accept does not grow the map), and an empty header for a nil one. As in Clone, the
// values share one backing array and each slice is capped at its length, so appending to one
// copies it instead of writing into its neighbour.
func cloneHeader(h http.Header, extra int) http.Header {
	n := 0
	for _, vv := range h {
		n += len(vv)
	}
	values := make([]string, n)
	out := make(http.Header, len(h)+extra)
	for k, vv := range h {
		if vv == nil {
			out[k] = nil // a nil value stays nil, as in Clone
			continue
		}
		m := copy(values, vv)
		out[k] = values[:m:m]
		values = values[m:]
	}
	return out
}
