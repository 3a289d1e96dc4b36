package main

import "net/url"

// compareColly prints Colly's built-in decision beside ours. The robots.txt work supplies it.
func compareColly(e env, body []byte, token string, u *url.URL, ours bool) error {
	return errNotYet("--compare-colly")
}
