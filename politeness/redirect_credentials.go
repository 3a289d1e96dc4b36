package politeness

// This file decides that a redirect hop carries no credentials the caller did not give.

import (
	"encoding/base64"
	"net/http"
	"net/url"
)

// dropRedirectCredentials removes the userinfo from the URL of every redirect hop (a request
// with Response set: the http.Client made it from a Location header, not the caller), before
// anything below sends, logs or stores it. A site that redirects to http://user:pass@elsewhere/
// would otherwise make the crawler send "Authorization: Basic …" to another origin (the client
// derives it from the URL), print the password in the final URL and write it into the cache key.
// The Authorization the client derived from that userinfo goes with it; one the caller set
// itself stays (the client forwards it only within the original host).
//
// The caller's own URLs keep their userinfo: the caller chose to send it.
func dropRedirectCredentials(next http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Response == nil || req.URL.User == nil {
			return next.RoundTrip(req)
		}
		out := req.Clone(req.Context())
		if out.Header.Get("Authorization") == basicAuthorization(out.URL.User) {
			out.Header.Del("Authorization")
		}
		out.URL.User = nil
		return next.RoundTrip(out)
	})
}

// basicAuthorization is the Authorization value http.Client derives from a URL's userinfo
// (net/http's client.go: "Basic " + base64(username:password), RFC 7617).
func basicAuthorization(u *url.Userinfo) string {
	password, _ := u.Password()
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+password))
}
