package daemon

import "testing"

// A ring holds at most its limit of records, oldest first, and never
// grows its slice past the limit (append alone would reach 32 for 20).
func TestRingGrowsToItsLimit(t *testing.T) {
	for _, limit := range []int{1, 3, 20, 100} {
		r := ring{limit: limit}
		for seq := range uint64(3 * limit) {
			r.add(Record{Seq: seq})
			if cap(r.items) > limit {
				t.Fatalf("limit %d: %d records held in a slice of %d", limit, len(r.items), cap(r.items))
			}
		}
		if len(r.items) != limit || r.items[0].Seq != uint64(2*limit) || r.items[limit-1].Seq != uint64(3*limit-1) {
			t.Errorf("limit %d: %d records, first %d, last %d", limit, len(r.items), r.items[0].Seq, r.items[len(r.items)-1].Seq)
		}
	}
}
