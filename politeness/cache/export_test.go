package cache

// MemoryEntries is the number of entries m holds, Vary indexes included: the tests' view of what
// reached the store.
func MemoryEntries(m *MemoryStore) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.items)
}
