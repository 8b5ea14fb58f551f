package probe

import (
	"fmt"
	"net/url"
	"testing"
)

// useOrigin asks p for the transport of k's origin, as a probe of a
// target there does.
func useOrigin(tb testing.TB, p *ConnPool, k connKey) {
	tb.Helper()
	u, err := url.Parse(k.origin)
	if err != nil {
		tb.Fatal(err)
	}
	p.transport(u, k, nil)
}

// A pool full of origins drops the least recently used batch for a new
// one: an origin used again lately stays, the batch of the oldest goes,
// and no more.
func TestConnPoolEvictsTheLeastRecentlyUsed(t *testing.T) {
	p := NewConnPool()
	defer p.Close()
	key := func(i int) connKey { return connKey{origin: fmt.Sprintf("http://127.0.0.%d:%d", i/1000, 1000+i%1000)} }
	for i := range poolMaxOrigins {
		useOrigin(t, p, key(i))
	}
	useOrigin(t, p, key(0)) // used again: the most recent now
	useOrigin(t, p, key(poolMaxOrigins))
	if got, want := len(p.byKey), poolMaxOrigins+1-poolEvictBatchSize; got != want {
		t.Fatalf("%d origins after one over the cap; want %d (a batch of %d dropped)", got, want, poolEvictBatchSize)
	}
	for i := range poolMaxOrigins + 1 {
		_, kept := p.byKey[key(i)]
		dropped := i >= 1 && i <= poolEvictBatchSize
		if kept == dropped {
			t.Errorf("origin %d: kept %t; want the %d least recently used (1-%d) dropped, the rest kept", i, kept, poolEvictBatchSize, poolEvictBatchSize)
		}
	}
}

// BenchmarkConnPoolNewOrigin is a new origin into a full pool, as a daemon
// probing more origins than the pool keeps pays at nearly every probe.
func BenchmarkConnPoolNewOrigin(b *testing.B) {
	p := NewConnPool()
	defer p.Close()
	for i := 0; b.Loop(); i++ {
		useOrigin(b, p, connKey{origin: fmt.Sprintf("http://127.0.0.1:%d", i)})
	}
}
