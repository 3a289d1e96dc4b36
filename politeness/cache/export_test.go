package cache

import "time"

// MemoryEntries is the number of entries m holds, Vary indexes included: the tests' view of what
// reached the store.
func MemoryEntries(m *MemoryStore) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.items)
}

// SetDiskClock makes s read the time from now: record times and when it next looks for other
// processes' records.
func SetDiskClock(s *DiskStore, now func() time.Time) {
	s.now = now
	s.nextScan.Store(0)
}

// RefreshEvery is how long a disk store goes without looking for other processes' records.
const RefreshEvery = refreshEvery
