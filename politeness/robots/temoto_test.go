package robots

import (
	"net/url"

	"github.com/temoto/robotstxt"
)

// collyTest asks temoto/robotstxt about u the way Colly v2.3.0's checkRobots does: the group
// found by prefix of the User-Agent, tested with the escaped path and the query re-encoded by
// url.Values. The differential tests and benchmarks compare against it; the command line's
// robots --compare-colly asks the same way.
func collyTest(data *robotstxt.RobotsData, userAgent string, u *url.URL) bool {
	p := u.EscapedPath()
	if u.RawQuery != "" {
		p += "?" + u.Query().Encode()
	}
	return data.FindGroup(userAgent).Test(p)
}
