package probe

import "slices"

// nthLastUse is the n-th earliest last use among the pool's transports
// (1 <= n <= len(byKey)): the batch ConnPool.evict drops is those used no
// later. Sorting the ticks costs one pass and n log n, not a pass per
// transport dropped.
func nthLastUse(byKey map[connKey]*pooledTransport, n int) uint64 {
	used := make([]uint64, 0, len(byKey))
	for _, pt := range byKey {
		used = append(used, pt.lastUsed)
	}
	slices.Sort(used)
	return used[n-1]
}
