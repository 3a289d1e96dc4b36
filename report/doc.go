// Package report tells a crawler author what a crawl did to each site, from the door's event
// stream (package politeness/events): per origin, the requests and the starts per second
// against the budget, the waits and why, robots.txt decisions with the deciding rule, the
// Retry-After pauses and whether they were kept, cache outcomes and the bytes the site did not
// have to send, the cookies refused, and the URLs found per discovery source.
//
// The report comes as plain text for a terminal ([Report.WriteText]) and as a report directory:
// DIR/index.html, one self-contained page (no script, nothing fetched) with each origin's figures
// and a timeline drawn with gonum.org/v1/plot as inline SVG, and DIR/events.jsonl, the raw event
// stream. During a crawl, [Create] streams the events to DIR/events.jsonl and keeps only the
// figures; its Close writes index.html. [Progress] shows a live line on a terminal.
//
//	dir, err := report.Create("crawl-report", report.Options{})
//	…
//	bus.Subscribe(dir.Record) // the bus of politeness.Policy.Events
//	… crawl, calling found.Add(url, foundVia) for every URL …
//	rep, err := dir.Close(&found)
//	rep.WriteText(os.Stdout)
//
// # The timeline
//
// One plot per origin, x in seconds since the crawl's first event, on one axis for every origin
// of the page. The black step line counts the request starts in the last second; the dashed red
// line is the budget (3 starts per second unless [Options] say otherwise), stepping down where a
// 429 lowered the rate the door allowed ([Origin.Lowered]). Each start is a dot on that line,
// coloured by its outcome: a full answer (cache miss), a 304 that let the cache serve its copy, a
// request outside the cache, or a 429/5xx or failure, re-sent or given up. Below the axis,
// each wait for a start slot is a bar from when the request asked to when it was granted,
// coloured by the reason; answers served from the cache without a request are dots on the
// bottom row. A pause the site asked for with Retry-After is a red shaded span, a backoff pause
// a brown one: no dot may fall inside.
//
// A start is what the events record closest to it: the host clock's grant (a Waited event) when
// the request waited, otherwise when it passed the robots gate (Admitted) or was re-sent
// (Retried); a robots.txt fetch that did not wait is placed at its answer. See [Origin.Requests]
// for which events count as requests.
//
// # events.jsonl
//
// One JSON object per line, one line per event, in the order the door emitted them (which is
// the order of their "time" only within one request). Fields that do not apply to an event are
// left out. A reader must ignore fields it does not know.
//
//	time       string  when the door decided, RFC 3339 in UTC with nanoseconds: "2026-01-15T09:00:00.123456789Z"
//	type       string  what happened (always present):
//	                     admitted  a request passed the robots gate and goes on to the cache and the budget
//	                     waited    a request waited for its start slot; reason, wait_ms
//	                     refused   a request was not sent; reason, detail
//	                     response  an answer reached the crawler; status, cache, bytes
//	                     paused    the origin was paused for every request; reason, until, wait_ms, status
//	                     retried   a request was re-sent after a 429/503 or a transient error; status, reason, wait_ms
//	                     notice    something else an operator should know; reason, detail
//	origin     string  the budget key, host[:port] (the port only when not the scheme's default)
//	url        string  the request's URL (for a cookie notice, the URL or origin that set the cookie)
//	kind       string  what the request was for: robots, sitemap, llms, feed, api, html, other
//	method     string  the HTTP method
//	status     number  the HTTP status of the answer (response, retried, paused)
//	cache      string  response: miss, fresh, revalidated (the site answered 304), stale; absent when
//	                   the cache took no part
//	bytes      number  response: body bytes delivered to the crawler, after decoding
//	truncated  bool    response: the body was cut at its kind's size cap
//	reason     string  waited: rate, crawl-delay, latency, retry-after, backoff, concurrency, robots;
//	                   refused: robots, budget (origin given up), deadline, error, stopped;
//	                   paused: retry-after, backoff, give-up; retried: retry-after, backoff;
//	                   notice: cookie-refused, latency, truncated, cache-corrupt, door-bypassed, …
//	detail     string  refused: the deciding robots.txt rule or the error; notice cookie-refused:
//	                   "<category>: <cookie name>"; notice latency: the origin's response time
//	wait_ms    number  milliseconds, to the nanosecond for waits under 26 days: how long the request
//	                   waited (waited), the pause (paused, from this event to until), the interval
//	                   before the re-send (retried), the spacing of starts (notice latency)
//	until      string  paused: when the pause ends, RFC 3339 as time; refused deadline: the earliest start
//	error      string  the error's text, when the event carries one
//
// The JSON field names are this package's; [JSONLWriter] writes them and [JSONLReader] reads
// them back into events.Event (the error as a plain error with the same text).
package report
