// Reading scripts' replies and turning the server's times into this process's.

package redisstore

import "time"

// local turns the server time at (µs) into this process's time, given that the server's clock read
// now (µs) when the reply that arrived at arrived was made.
func local(arrived time.Time, now, at int64) time.Time {
	return arrived.Add(time.Duration(at-now) * time.Microsecond)
}

func unixMicro(us int64) time.Time { return time.UnixMicro(us) }

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}

// toInt and toString read element i of a script's reply; a reply shorter than expected or of
// another type reads as zero, which the callers treat as "nothing".
func toInt(reply []any, i int) int64 {
	if i < len(reply) {
		if v, ok := reply[i].(int64); ok {
			return v
		}
	}
	return 0
}

func toString(reply []any, i int) string {
	if i < len(reply) {
		if v, ok := reply[i].(string); ok {
			return v
		}
	}
	return ""
}
