//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// pollEvery is how often waits look again: short against the 1 s scrape and
// evaluation intervals, cheap on a 2-core machine.
const pollEvery = 100 * time.Millisecond

// waitFor polls check until it returns nil, failing the test with check's
// last error after timeout, or at once when a started process has died. It
// returns how long it waited.
func (h *harness) waitFor(what string, timeout time.Duration, check func() error) time.Duration {
	h.t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		h.checkRunning()
		err := check()
		if err == nil {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("waited %s for %s: %v", timeout, what, err)
		}
		time.Sleep(pollEvery)
	}
}

// freeAddr returns a 127.0.0.1 address with a port that was free a moment
// ago. The gap before the program binds it is short; a clash shows up as
// that program failing to start, with "address in use" in its log.
func freeAddr(t *testing.T) string {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		// Linux may hand the port just closed out again at the next
		// bind: never give one address to two of a test's processes.
		if !handedOut.addrs[addr] {
			handedOut.addrs[addr] = true
			return addr
		}
	}
	t.Fatal("no free loopback port that was not handed out already")
	return ""
}

// handedOut are the addresses freeAddr gave.
var handedOut = struct {
	sync.Mutex
	addrs map[string]bool
}{addrs: map[string]bool{}}

// portOf returns the port of a host:port address.
func portOf(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// tcpAccepts reports whether something accepts connections at addr.
func tcpAccepts(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

// httpOK reports whether GET url answers 200.
func httpOK(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// listenersOnPort returns the local addresses, as the kernel writes them in
// /proc/net/tcp{,6} (hex IP:port), of the listening TCP sockets on port.
func listenersOnPort(port int) ([]string, error) {
	var found []string
	suffix := fmt.Sprintf(":%04X", port)
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			// sl local_address rem_address st ...; st 0A is LISTEN
			if len(fields) > 3 && fields[3] == "0A" && strings.HasSuffix(fields[1], suffix) {
				found = append(found, fields[1])
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return found, nil
}

// loopbackV4 is 127.0.0.1 as /proc/net/tcp writes it (host byte order on
// little-endian machines, which are the ones CI runs on).
const loopbackV4 = "0100007F"
