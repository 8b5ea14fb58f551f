package daemon

import "testing"

// A ring holds its last limit records, oldest first, and never grows its
// slice past the limit (append alone would reach 32 for 20).
func TestRingGrowsToItsLimit(t *testing.T) {
	for _, limit := range []int{1, 3, 20, 100} {
		r := ring{limit: limit}
		var seq uint64
		for range 3 * limit {
			r.add(Record{Seq: seq})
			seq++
			if cap(r.items) > limit {
				t.Fatalf("limit %d: %d records held in a slice of %d", limit, len(r.items), cap(r.items))
			}
		}
		if len(r.items) != limit || r.items[len(r.items)-1].Seq != seq-1 {
			t.Fatalf("limit %d: %d records, the last %d; want %d, the last %d", limit, len(r.items), r.items[len(r.items)-1].Seq, limit, seq-1)
		}
		for i := 1; i < len(r.items); i++ {
			if r.items[i].Seq != r.items[i-1].Seq+1 {
				t.Errorf("limit %d: records %d and %d out of order", limit, r.items[i-1].Seq, r.items[i].Seq)
			}
		}
	}
}
