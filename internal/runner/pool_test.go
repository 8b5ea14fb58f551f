package runner

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestNewPoolSettlesTheBounds(t *testing.T) {
	cases := []struct{ all, stdio, wantAll, wantStdio int }{
		{all: 16, stdio: 4, wantAll: 16, wantStdio: 4},
		{all: 4, stdio: 8, wantAll: 4, wantStdio: 4}, // stdio probes are probes: never more than all
		{all: 0, stdio: 0, wantAll: 1, wantStdio: 1}, // a pool with no slot would wait forever
		{all: -3, stdio: 2, wantAll: 1, wantStdio: 1},
	}
	for _, tc := range cases {
		all, stdio := NewPool(tc.all, tc.stdio).Sizes()
		if all != tc.wantAll || stdio != tc.wantStdio {
			t.Errorf("NewPool(%d, %d).Sizes() = %d, %d; want %d, %d", tc.all, tc.stdio, all, stdio, tc.wantAll, tc.wantStdio)
		}
	}
}

// Many probes at once never hold more slots than the bounds, and every
// slot comes back.
func TestPoolBoundsHoldUnderLoad(t *testing.T) {
	const all, stdio = 3, 2
	p := NewPool(all, stdio)
	var mu sync.Mutex
	var inAll, inStdio, mostAll, mostStdio int
	enter := func(isStdio bool, by int) {
		mu.Lock()
		defer mu.Unlock()
		inAll += by
		if isStdio {
			inStdio += by
		}
		mostAll, mostStdio = max(mostAll, inAll), max(mostStdio, inStdio)
	}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			isStdio := i%2 == 0
			release, err := p.Acquire(context.Background(), isStdio)
			if err != nil {
				t.Error(err)
				return
			}
			enter(isStdio, 1)
			time.Sleep(time.Millisecond)
			enter(isStdio, -1)
			release()
		}()
	}
	wg.Wait()
	if mostAll > all || mostStdio > stdio {
		t.Errorf("at most %d probes and %d stdio probes at once, want at most %d and %d", mostAll, mostStdio, all, stdio)
	}
	if len(p.all) != 0 || len(p.stdio) != 0 {
		t.Errorf("%d slots and %d stdio slots still taken after every release", len(p.all), len(p.stdio))
	}
}

// A stdio probe waiting on the stdio bound holds none of the shared slots:
// an HTTP probe still gets one at once.
func TestStdioWaitLeavesSharedSlotsFree(t *testing.T) {
	p := NewPool(2, 1)
	release := take(t, p, true)
	defer release()
	cancel, done := wait(p, true)
	waitForWaiters(t, p, 1) // the second stdio probe waits (for whichever slot it lacks)

	// Generous: a correct pool answers at once, a wrong one never.
	ctx, stop := context.WithTimeout(t.Context(), 5*time.Second)
	defer stop()
	if httpRelease, err := p.Acquire(ctx, false); err != nil {
		t.Errorf("an HTTP probe got no slot while a stdio probe waited on the stdio bound: %v", err)
	} else {
		httpRelease()
	}
	cancel()
	if err := <-done; err == nil {
		t.Errorf("the waiting stdio probe got a slot past the stdio bound of 1")
	}
}

// A stdio probe canceled while it waits for a shared slot gives back the
// stdio slot it already took.
func TestCanceledWaitGivesBackItsStdioSlot(t *testing.T) {
	p := NewPool(1, 1)
	httpRelease := take(t, p, false)
	cancel, done := wait(p, true)
	waitForWaiters(t, p, 1) // it took the stdio slot and waits for the shared one
	if len(p.stdio) != 1 {
		t.Fatalf("%d stdio slots taken while the stdio probe waits for a shared one, want 1", len(p.stdio))
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("Acquire returned a slot the pool did not have")
	}
	if len(p.stdio) != 0 {
		t.Errorf("the canceled stdio probe kept its stdio slot")
	}
	httpRelease()
	if len(p.all) != 0 {
		t.Errorf("a shared slot is still taken")
	}
}

// take acquires a slot that is free.
func take(t *testing.T, p *Pool, stdio bool) (release func()) {
	t.Helper()
	release, err := p.Acquire(t.Context(), stdio)
	if err != nil {
		t.Fatal(err)
	}
	return release
}

// wait starts an Acquire in the background; done says how it ended (a slot
// it got is given back at once).
func wait(p *Pool, stdio bool) (cancel func(), done <-chan error) {
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan error, 1)
	go func() {
		release, err := p.Acquire(ctx, stdio)
		if err == nil {
			release()
		}
		out <- err
	}()
	return cancel, out
}

// waitForWaiters waits until n Acquires of p wait for a slot. They count
// themselves just before they block, and nothing here releases a slot, so
// from then on they are waiting, however loaded the machine.
func waitForWaiters(t *testing.T, p *Pool, n int32) {
	t.Helper()
	if !awaitWaiters(p, n) {
		t.Fatalf("%d of %d Acquires waiting after 20s", p.waiting.Load(), n)
	}
}

// awaitWaiters is waitForWaiters for a goroutine other than the test's:
// false after a bound only a failing pool reaches.
func awaitWaiters(p *Pool, n int32) bool {
	deadline := time.Now().Add(20 * time.Second)
	for p.waiting.Load() < n {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}
