package robots

// This file decides which failed robots.txt fetches say nothing about the site: those that
// failed on this machine, before a request left it.

import (
	"errors"
	"syscall"
	"time"
)

// RetryLocalFailureAfter is how long the outcome of a fetch that failed on this machine —
// out of file descriptors (EMFILE for the process, ENFILE for the system) — is kept before the
// next attempt, in place of Options.RetryFailedAfter: no request reached the site, so its
// robots.txt is not "unreachable" for the normal retry period, only until descriptors free up.
// The origin stays disallowed (or on its last good copy) meanwhile.
const RetryLocalFailureAfter = time.Second

// localFailure reports whether err is this machine's limit, not the site's answer.
func localFailure(err error) bool {
	return err != nil && (errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE))
}
