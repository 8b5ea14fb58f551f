package probetest_test

import (
	"slices"
	"testing"
	"time"

	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

func TestUpWithin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		upAt  int // the attempt that is up, 0: none
		tried []time.Duration
		up    bool
	}{
		{"up at once", 1, []time.Duration{time.Second}, true},
		{"up at the third", 3, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, true},
		{"never up", 0, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var tried []time.Duration
			last, up := probetest.UpWithin(time.Second, func(d time.Duration) bool {
				tried = append(tried, d)
				return len(tried) == tc.upAt
			})
			if !slices.Equal(tried, tc.tried) || up != tc.up || last != tc.tried[len(tc.tried)-1] {
				t.Errorf("tried %v, returned %s, %v; want %v, %v", tried, last, up, tc.tried, tc.up)
			}
		})
	}
}
