package shard

import (
	"fmt"
	"testing"
)

// The split is Prometheus's hashmod: these values were computed outside Go
// (Python's hashlib: the last 8 bytes of the MD5 as a big-endian integer,
// modulo the total), so they pin the hash as documented.
func TestOfIsHashmod(t *testing.T) {
	for _, tc := range []struct {
		name  string
		total int
		want  int
	}{
		{"report", 1, 0},
		{"report", 3, 0}, {"report", 7, 4},
		{"remote", 3, 1}, {"remote", 7, 3},
		{"server-0007", 3, 2}, {"server-0007", 7, 6},
		{"github", 3, 2}, {"github", 7, 5},
	} {
		if got := Of(tc.name, tc.total); got != tc.want {
			t.Errorf("Of(%q, %d) = %d, want %d", tc.name, tc.total, got, tc.want)
		}
	}
}

// Every server is owned by exactly one of the shards, and the shards are
// about even.
func TestEveryServerInExactlyOneShard(t *testing.T) {
	const n, total = 3000, 3
	counts := make([]int, total)
	for i := range n {
		name := fmt.Sprintf("server-%04d", i)
		owners := 0
		for idx := range total {
			if (Shard{Index: idx, Total: total}).Owns(name) {
				owners++
				counts[idx]++
			}
		}
		if owners != 1 {
			t.Fatalf("%s is owned by %d shards", name, owners)
		}
	}
	for idx, c := range counts {
		if c < n/total*8/10 || c > n/total*12/10 {
			t.Errorf("shard %d owns %d of %d servers (counts %v): not within 20%% of even", idx, c, n, counts)
		}
	}
	if !(Shard{}).Owns("anything") || !whole.Owns("anything") {
		t.Error("the whole fleet does not own a server")
	}
}

func TestOrdinal(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		ok   bool
	}{
		{"mcpwatch-0", 0, true},
		{"mcpwatch-12", 12, true},
		{"mcpwatch-sharded-2", 2, true},
		{"mcpwatch-7d9f8c6b5-x2kq9", 0, false},
		{"mcpwatch", 0, false},
		{"mcpwatch-", 0, false},
		{"mcpwatch-01", 0, false},
		{"-1", 0, false},
		{"7", 0, false},
		{"", 0, false},
	} {
		n, ok := Ordinal(tc.name)
		if n != tc.n || ok != tc.ok {
			t.Errorf("Ordinal(%q) = %d, %v; want %d, %v", tc.name, n, ok, tc.n, tc.ok)
		}
	}
}

func TestFromPodName(t *testing.T) {
	s, err := FromPodName("mcpwatch-2", 3)
	if err != nil || s != (Shard{Index: 2, Total: 3}) {
		t.Errorf("mcpwatch-2 of 3: %v, %v", s, err)
	}
	for _, tc := range []struct {
		pod   string
		total int
	}{{"mcpwatch-3", 3}, {"mcpwatch-abcde", 3}, {"mcpwatch-0", 0}} {
		if _, err := FromPodName(tc.pod, tc.total); err == nil {
			t.Errorf("FromPodName(%q, %d): no error", tc.pod, tc.total)
		}
	}
}
