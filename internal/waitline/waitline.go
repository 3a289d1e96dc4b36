// Package waitline orders an origin's line of requests waiting for a start slot the same way in
// every clock (the in-process host clock and the shared Redis clock): robots.txt first.
package waitline

import "slices"

// Join returns line with w added in its place: a request for robots.txt goes ahead of every page,
// behind the robots.txt requests already waiting — the pages are waiting for it at the robots
// gate anyway — and a page goes to the back. robots reports whether a waiter is a robots.txt
// request.
func Join[W any](line []W, w W, robots func(W) bool) []W {
	if !robots(w) {
		return append(line, w)
	}
	i := 0
	for i < len(line) && robots(line[i]) {
		i++
	}
	return slices.Insert(line, i, w)
}
