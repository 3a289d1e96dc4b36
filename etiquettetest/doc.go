// Package etiquettetest is a recording test site for crawlers, as net/http/httptest is for
// HTTP handlers: a crawler author points a scraper at it in CI and proves, from what the site
// received, that the scraper is still polite after adding callbacks, clones, headers and proxies
// of their own. It uses the standard library only, so a program may embed a site built with it.
//
// A [Site] is a set of origins on loopback, each an httptest server on its own port. The test
// builds each origin's answers from parts — robots.txt, pages with links, sitemaps, a feed,
// llms.txt, a WordPress listing, redirects across origins — and refines them: validators (and
// 304 on a matching conditional request), cookies, 429 or 503 with Retry-After on the n-th
// request to a path, slow and hanging answers released by a channel or a duration. An answer
// the parts cannot express — one that depends on a count across paths, or on the moment it is
// asked for — is chosen per request by a function ([Func]).
//
//	site := etiquettetest.NewSite()
//	defer site.Close()
//	shop := site.NewOrigin().Robots("User-agent: *\nDisallow: /cart\n")
//	shop.Page("/", "Shop", "/a", "/cart")
//	shop.Serve("/a", etiquettetest.HTMLPage("A").ETag("a1"))
//	shop.Nth("/a", 1, etiquettetest.Status(429).RetryAfter(time.Second))
//
// The site records every request as its server saw it — arrival time, origin, method, path and
// query, every header — and what it answered: status, headers, body bytes ([Request]). [Site.Mark] and [Site.Since] cut the
// recording, e.g. to judge a second crawl alone.
//
// A [Rule] is an operator's expectation judged over a recording: [IdentifyEveryRequestAs],
// [FetchRobotsTxtFirst], [NeverRequest], [StartAtMostPerSecond], [KeepAtMostInFlight],
// [WaitAfterRetryAfter], [SendNoCookies], [SendOnlyCookies], [RevalidateWith304],
// [ProbeNoWellKnown]. [Site.Check] and [Verify] check rules in a plain test; package matchers offers each rule as
// a Gomega matcher. A broken rule's [ViolationError] lists the offending requests as an operator
// would quote them from a log. No rule passes on an empty recording.
//
// [CheckCollyVersion] fails a test built with a Colly outside the versions etiquette is tested
// with ([CollyTested]). The door policy a test should crawl through — its own host clock,
// robots.txt keeper and a cache under t.TempDir() — is in package isolated
// (isolated.Policy(t, identity)), apart from this one because it links the door.
package etiquettetest
