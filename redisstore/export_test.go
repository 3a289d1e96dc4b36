package redisstore

import "github.com/politecrawl/etiquette/politeness/kind"

// OnWait makes c call f whenever the first request in line for an origin is told to wait.
func OnWait(c *Clock, f func(key string, k kind.Kind, reason string)) { c.testHookWait = f }
