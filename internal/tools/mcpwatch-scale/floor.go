package main

// The floor: what the requests of a probe cost a client that makes them and
// does nothing else. During one interval of mcpwatch's window the fleet
// records every request mcpwatch sends (method, the headers that shape the
// answer, the body) and when each server's first one came; after mcpwatch
// has stopped, a minimal client in a process of its own (this binary,
// -mode floor-client) sends the same requests to the same fleet over
// kept-alive connections, each server's at the same offset in every
// interval, reads every answer to its end and parses nothing. mcpwatch's
// CPU per probe over the floor's CPU per server's requests is the ratio the
// report gives: what mcpwatch adds to the HTTP exchanges themselves.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// floorClientEnv tells a test binary to be the floor client.
const floorClientEnv = "MCPWATCH_SCALE_FLOOR_CLIENT"

// floorHeaders are the request headers the floor sends as mcpwatch sent
// them: those that decide how a server answers. The session header is
// replaced by the session the floor's own initialize got.
var floorHeaders = []string{"Content-Type", "Accept", "Mcp-Session-Id", "Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name", "Authorization"}

// recordedRequest is one request of a probe, as mcpwatch sent it.
type recordedRequest struct {
	Method string            `json:"method"`
	Header map[string]string `json:"header,omitempty"`
	Body   []byte            `json:"body,omitempty"`
}

// floorServer is one server's requests in an interval, and when in the
// interval the first was sent.
type floorServer struct {
	URL      string            `json:"url"`
	OffsetNS int64             `json:"offset_ns"`
	Requests []recordedRequest `json:"requests"`
}

// floorPlan is what the floor client replays.
type floorPlan struct {
	IntervalNS int64         `json:"interval_ns"`
	WindowNS   int64         `json:"window_ns"` // measured after one round of warm-up
	Servers    []floorServer `json:"servers"`
}

// requestRecorder keeps the requests the fleet receives between from and
// to (Unix nanoseconds; from 0: off), by server index.
type requestRecorder struct {
	from, to atomic.Int64

	mu     sync.Mutex
	first  map[int]time.Time
	byServ map[int][]recordedRequest
}

func newRequestRecorder() *requestRecorder {
	return &requestRecorder{first: map[int]time.Time{}, byServ: map[int][]recordedRequest{}}
}

// record keeps r if the recorder is on, and gives r a body that can be
// read again.
func (rec *requestRecorder) record(i int, r *http.Request) {
	now := time.Now()
	from := rec.from.Load()
	// A GET is a listener's stream (-watch), not a probe's request.
	if r.Method == http.MethodGet || from == 0 || now.UnixNano() < from || now.UnixNano() >= rec.to.Load() {
		return
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	req := recordedRequest{Method: r.Method, Body: body, Header: map[string]string{}}
	for _, h := range floorHeaders {
		if v := r.Header.Get(h); v != "" {
			req.Header[h] = v
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if _, ok := rec.first[i]; !ok {
		rec.first[i] = now
	}
	rec.byServ[i] = append(rec.byServ[i], req)
}

// plan is the floor's plan from what was recorded in [from, from+interval).
func (rec *requestRecorder) plan(fleet *fleetServer, servers []simServer, interval, window time.Duration) floorPlan {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	from := time.Unix(0, rec.from.Load())
	p := floorPlan{IntervalNS: int64(interval), WindowNS: int64(window)}
	for i, s := range servers {
		reqs := rec.byServ[i]
		if len(reqs) == 0 {
			continue
		}
		p.Servers = append(p.Servers, floorServer{URL: fleet.url(s), OffsetNS: int64(rec.first[i].Sub(from)), Requests: reqs})
	}
	return p
}

// floorResult is what the floor client reports on its last line.
type floorResult struct {
	Batches  int `json:"batches"`  // servers' requests sent in the window
	Requests int `json:"requests"` // HTTP requests in the window
	Errors   int `json:"errors"`   // requests that got no answer
}

// runFloor writes plan, runs the floor client on it (env added to its
// environment), and measures its CPU over the window after one round of
// warm-up; window, when set, is called as the window opens and as it shuts.
func runFloor(ctx context.Context, dir string, plan floorPlan, env []string, window func(shut bool)) (cpuS float64, fr floorResult, err error) {
	path := dir + "/floor-plan.json"
	raw, err := json.Marshal(plan)
	if err != nil {
		return 0, fr, err
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		return 0, fr, err
	}
	self, err := os.Executable()
	if err != nil {
		return 0, fr, err
	}
	cmd := exec.CommandContext(ctx, self, "-mode", "floor-client", "-floor-plan", path) //nolint:gosec // G204: this binary, on the plan it just wrote
	// A test binary runs the harness's main instead of its tests when
	// told so (main_test.go).
	cmd.Env = append(append(minimalEnv(), env...), floorClientEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, fr, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return 0, fr, fmt.Errorf("start the floor client: %w", err)
	}
	defer func() { _ = cmd.Wait() }()
	lines := bufio.NewScanner(out)
	// The client says when its first round starts; the window opens one
	// interval later and lasts plan.WindowNS.
	if !lines.Scan() {
		return 0, fr, fmt.Errorf("the floor client said nothing")
	}
	t0ns, err := strconv.ParseInt(strings.TrimPrefix(lines.Text(), "start "), 10, 64)
	if err != nil {
		return 0, fr, fmt.Errorf("the floor client's first line %q: %w", lines.Text(), err)
	}
	open := time.Unix(0, t0ns).Add(time.Duration(plan.IntervalNS))
	time.Sleep(time.Until(open))
	c0, err := readProcStat(cmd.Process.Pid)
	if err != nil {
		return 0, fr, err
	}
	if window != nil {
		window(false)
	}
	time.Sleep(time.Until(open.Add(time.Duration(plan.WindowNS))))
	c1, err := readProcStat(cmd.Process.Pid)
	if err != nil {
		return 0, fr, err
	}
	if window != nil {
		window(true)
	}
	var last string
	for lines.Scan() {
		last = lines.Text()
	}
	if err := json.Unmarshal([]byte(last), &fr); err != nil {
		return 0, fr, fmt.Errorf("the floor client's result %q: %w", last, err)
	}
	return (c1.cpu - c0.cpu).Seconds(), fr, nil
}

// floorClient replays the plan at path: one round of warm-up, the window,
// and a second more, then prints its result. The first line it prints is
// "start" and the Unix time in nanoseconds its first round starts.
func floorClient(path string, stdout io.Writer) error {
	raw, err := os.ReadFile(path) //nolint:gosec // G304: the plan runFloor wrote and named
	if err != nil {
		return err
	}
	var plan floorPlan
	if err := json.Unmarshal(raw, &plan); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	slices.SortFunc(plan.Servers, func(a, b floorServer) int { return int(a.OffsetNS - b.OffsetNS) })
	interval, window := time.Duration(plan.IntervalNS), time.Duration(plan.WindowNS)
	client := &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			MaxIdleConns:        0,
			MaxIdleConnsPerHost: len(plan.Servers) + 1,
			IdleConnTimeout:     2 * interval,
		},
	}
	t0 := time.Now().Add(100 * time.Millisecond)
	fmt.Fprintf(stdout, "start %d\n", t0.UnixNano())
	open, shut := t0.Add(interval), t0.Add(interval+window)
	end := shut.Add(time.Second)
	var res floorResult
	var mu sync.Mutex
	var wg sync.WaitGroup
	for round := 0; ; round++ {
		start := t0.Add(time.Duration(round) * interval)
		if !start.Before(end) {
			break
		}
		for _, s := range plan.Servers {
			at := start.Add(time.Duration(s.OffsetNS))
			if !at.Before(end) {
				break
			}
			time.Sleep(time.Until(at))
			in := !at.Before(open) && at.Before(shut)
			wg.Go(func() {
				errs := replay(client, s)
				if in {
					mu.Lock()
					res.Batches++
					res.Requests += len(s.Requests)
					res.Errors += errs
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	line, _ := json.Marshal(res)
	fmt.Fprintf(stdout, "%s\n", line)
	return nil
}

// replay sends one server's requests in order, with the session its own
// answers give, and reads each answer to its end. It returns the requests
// that got no answer.
func replay(client *http.Client, s floorServer) (errs int) {
	session := ""
	for _, rr := range s.Requests {
		req, err := http.NewRequest(rr.Method, s.URL, bytes.NewReader(rr.Body))
		if err != nil {
			errs++
			continue
		}
		for k, v := range rr.Header {
			if k == "Mcp-Session-Id" && session != "" {
				v = session
			}
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			errs++
			continue
		}
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			session = id
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	return errs
}
