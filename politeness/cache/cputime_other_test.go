//go:build !unix

package cache_test

import "time"

// processCPU is not measured on this platform; the benchmark then reports wall time only.
func processCPU() (time.Duration, bool) { return 0, false }
