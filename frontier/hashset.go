package frontier

// This file decides how the in-process storage remembers which URLs it has seen: a set of 64-bit
// hashes that costs about 11 to 21 bytes a URL.
//
// Hand-written rather than a Go map: map[uint64]struct{} was measured at 24 to 38 bytes an entry
// (Go 1.26, 10⁵ to 10⁶ entries), which would be a third of what a queued URL costs.

// hashSet is a set of non-zero 64-bit hashes: open addressing with linear probing, split by the
// hash's top byte into 256 shards that each double when three quarters full. The shards grow one
// at a time, so the set never needs twice its memory at once and its average load stays near
// 56 %. The zero value is an empty set.
type hashSet struct {
	shards [256]hashShard
}

type hashShard struct {
	slots []uint64 // 0 marks a free slot; the length is a power of two
	n     int
}

// minShardSlots is a new shard's size: 256 shards of it cost 32 KiB.
const minShardSlots = 16

// slot maps a hash to its stored form: 0 marks a free slot, so the hash 0 is stored as 1. That
// merges two of 2⁶⁴ values, which changes the collision rate by nothing measurable.
func slot(h uint64) uint64 { return max(h, 1) }

// has reports whether h is in the set.
func (s *hashSet) has(h uint64) bool {
	h = slot(h)
	sh := &s.shards[h>>56]
	if len(sh.slots) == 0 {
		return false
	}
	mask := uint64(len(sh.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch sh.slots[i] {
		case 0:
			return false
		case h:
			return true
		}
	}
}

// add puts h in the set; h must not be in it already.
func (s *hashSet) add(h uint64) {
	h = slot(h)
	sh := &s.shards[h>>56]
	if 4*(sh.n+1) > 3*len(sh.slots) {
		sh.grow()
	}
	sh.insert(h)
	sh.n++
}

func (sh *hashShard) insert(h uint64) {
	mask := uint64(len(sh.slots) - 1)
	i := h & mask
	for sh.slots[i] != 0 {
		i = (i + 1) & mask
	}
	sh.slots[i] = h
}

func (sh *hashShard) grow() {
	old := sh.slots
	sh.slots = make([]uint64, max(minShardSlots, 2*len(old)))
	for _, h := range old {
		if h != 0 {
			sh.insert(h)
		}
	}
}
