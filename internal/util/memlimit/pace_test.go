package memlimit

import (
	"context"
	"testing"
	"time"
)

// A small live heap may grow by the headroom between collections; a large
// one is collected as at Go's default, never more often.
func TestPercentFor(t *testing.T) {
	for _, c := range []struct {
		live int64
		want int
	}{
		{0, MaxPercent},            // before the first collection
		{10 << 20, MaxPercent},     // 1,000 servers: capped
		{80 << 20, 200},            // 10,000 servers: 160 MiB of headroom on 80 MiB live
		{160 << 20, 100},           // the headroom reached: Go's default
		{1 << 30, 100},             // 100,000 servers: never below the default
		{(160 << 20) * 4 / 3, 100}, // 133% would be 75
	} {
		if got := PercentFor(c.live); got != c.want {
			t.Errorf("PercentFor(%d MiB) = %d; want %d", c.live>>20, got, c.want)
		}
	}
}

// pace sets the pace at once, follows the live heap at every tick, calls
// the runtime only when the pace changes, and returns when ctx ends.
func TestPaceFollowsTheLiveHeap(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	tick := make(chan time.Time)
	lives := []int64{80 << 20, 80 << 20, 1 << 30}
	read := 0
	var set []int
	done := make(chan struct{})
	go func() {
		defer close(done)
		pace(ctx, tick, func() int64 {
			l := lives[min(read, len(lives)-1)]
			read++
			return l
		}, func(p int) int { set = append(set, p); return 0 })
	}()
	tick <- time.Time{}
	tick <- time.Time{} // the third reading happens before pace waits again
	cancel()
	<-done
	if len(set) != 2 || set[0] != 200 || set[1] != 100 {
		t.Errorf("pace set GOGC %v; want [200 100] (once per change)", set)
	}
}
