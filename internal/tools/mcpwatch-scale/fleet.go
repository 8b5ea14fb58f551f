package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe/probetest"
)

// toolSetCount is how many distinct tool sets the simulated servers draw
// from: enough that the fleet is not one surface repeated, few enough that
// the harness shares one test server per set, era and behavior.
const toolSetCount = 64

// simServer is one simulated MCP server of the fleet.
type simServer struct {
	name     string
	path     string // on its listener, e.g. /s/42/mcp
	listener int
	era      probetest.Era
	behavior probetest.Behavior
	delay    time.Duration // added before every reply of a slow server
	toolSet  int
	// driftedLock makes the lock expect a tool the server does not list,
	// so a share of the fleet shows missing tools as a real one would.
	driftedLock bool
	// readOnlyTool annotates the server's first tool readOnlyHint: true
	// and requires no argument of it: what calls: auto calls (-auto-calls).
	readOnlyTool bool
}

// fleetSpec is the shape of a simulated fleet.
type fleetSpec struct {
	// readOnlyTool gives every server a tool calls: auto calls (see
	// simServer.readOnlyTool).
	readOnlyTool bool
	n            int
	listeners    int
	failShare    float64 // answering 401 or 500
	slowShare    float64 // adding 50-200 ms to every reply
	// slowDelay, when set, is what each slow server adds instead: every
	// one the same (-slow-delay 200ms: "5% answering in 200 ms").
	slowDelay time.Duration
	seed      uint64
}

// planFleet assigns each server its era, tool set and behavior. The same
// spec always gives the same fleet.
func planFleet(spec fleetSpec) []simServer {
	r := rand.New(rand.NewPCG(spec.seed, 0x6d637077)) //nolint:gosec // G404: a seeded generator, so one spec always plans the same fleet; nothing secret
	eras := []probetest.Era{probetest.EraModern, probetest.EraLegacy, probetest.EraDual}
	// Exact shares, on servers picked at random: the first of a shuffled
	// order fail, the next are slow.
	order := r.Perm(spec.n)
	failing := int(math.Round(spec.failShare * float64(spec.n)))
	slow := int(math.Round(spec.slowShare * float64(spec.n)))
	servers := make([]simServer, spec.n)
	for i := range servers {
		s := simServer{
			name:     serverName(i, spec.n),
			path:     fmt.Sprintf("/s/%d/mcp", i),
			listener: i % max(spec.listeners, 1),
			era:      eras[i%len(eras)],
			behavior: probetest.Healthy,
			toolSet:  (i / len(eras)) % toolSetCount,

			readOnlyTool: spec.readOnlyTool,
		}
		switch rank := order[i]; {
		case rank < failing/2:
			s.behavior = probetest.Unauthorized401
		case rank < failing:
			s.behavior = probetest.ServerError500
		case rank < failing+slow:
			s.delay = 50*time.Millisecond + time.Duration(r.Int64N(int64(150*time.Millisecond)))
			if spec.slowDelay > 0 {
				s.delay = spec.slowDelay
			}
		}
		s.driftedLock = i%50 == 7
		servers[i] = s
	}
	return servers
}

// serverName is s0042 for server 42 of a fleet of 1,000: names sort in
// server order.
func serverName(i, n int) string {
	width := len(strconv.Itoa(max(n-1, 1)))
	return fmt.Sprintf("s%0*d", width, i)
}

// toolsOf returns the tools of set k: 3 to 40 tools with small schemas;
// readOnly makes its first tool one calls: auto chooses: annotated
// readOnlyHint: true, and needing no argument.
func toolsOf(k int, readOnly bool) []probetest.Tool {
	count := 3 + (k*7)%38
	tools := make([]probetest.Tool, count)
	for j := range tools {
		tools[j] = probetest.Tool{
			Name:        fmt.Sprintf("set%02d_tool_%02d", k, j),
			Description: fmt.Sprintf("Tool %d of set %d: reads records for a date range.", j, k),
			InputSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"from":  map[string]any{"type": "string", "format": "date"},
					"to":    map[string]any{"type": "string", "format": "date"},
					"limit": map[string]any{"type": "integer", "minimum": 1},
				},
				"required": []any{"from"},
			},
		}
	}
	if readOnly {
		tools[0].Annotations = probetest.ReadOnly()
		tools[0].InputSchema = map[string]any{"type": "object", "properties": tools[0].InputSchema["properties"]}
	}
	return tools
}

func toolNames(tools []probetest.Tool) []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names
}

// fleetHandler routes /s/{i}/mcp to server i's test server. Servers of the
// same tool set, era and behavior share one probetest.Server: a probe
// cannot tell, and 10,000 servers then cost the harness little memory.
type fleetHandler struct {
	rec *requestRecorder // mcpwatch's requests, for the floor (floor.go)
	// watch holds every GET (a listener's stream) open as an event stream
	// until the fleet closes.
	watch   bool
	closing chan struct{}
	servers []simServer
	kits    []*probetest.Server // by server index
	all     []*probetest.Server // each distinct one, to close
}

func newFleetHandler(servers []simServer) *fleetHandler {
	type key struct {
		set      int
		era      probetest.Era
		behavior probetest.Behavior
		readOnly bool
	}
	type setKey struct {
		set      int
		readOnly bool
	}
	shared := map[key]*probetest.Server{}
	sets := map[setKey][]probetest.Tool{}
	h := &fleetHandler{rec: newRequestRecorder(), servers: servers, kits: make([]*probetest.Server, len(servers)), closing: make(chan struct{})}
	for i, s := range servers {
		k := key{s.toolSet, s.era, s.behavior, s.readOnlyTool}
		kit, ok := shared[k]
		if !ok {
			sk := setKey{s.toolSet, s.readOnlyTool}
			tools, ok := sets[sk]
			if !ok {
				tools = toolsOf(s.toolSet, s.readOnlyTool)
				sets[sk] = tools
			}
			kit = probetest.NewServer(probetest.Config{
				Era: s.era, Behavior: s.behavior, Tools: tools,
				ServerName: fmt.Sprintf("sim-set%02d", s.toolSet),
			})
			shared[k] = kit
			h.all = append(h.all, kit)
		}
		h.kits[i] = kit
	}
	return h
}

func (h *fleetHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/s/")
	id, tail, _ := strings.Cut(rest, "/")
	i, err := strconv.Atoi(id)
	if !ok || err != nil || tail != "mcp" || i < 0 || i >= len(h.servers) {
		http.NotFound(w, r)
		return
	}
	h.rec.record(i, r)
	if h.watch && (r.Method == http.MethodGet || r.Header.Get("Mcp-Method") == "subscriptions/listen") {
		h.holdStream(w, r)
		return
	}
	if d := h.servers[i].delay; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	h.kits[i].ServeHTTP(w, r)
}

// holdStream answers a listener's GET (legacy) or subscriptions/listen
// (2026-07-28) with an event stream that stays open, announcing nothing,
// until the listener or the fleet ends it.
func (h *fleetHandler) holdStream(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, ": listening\n\n")
	if r.Method == http.MethodPost { // 2026-07-28: the subscription is acknowledged first
		_, _ = io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":{}}\n\n")
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	select {
	case <-r.Context().Done():
	case <-h.closing:
	}
}

func (h *fleetHandler) close() {
	select {
	case <-h.closing:
	default:
		close(h.closing)
	}
	for _, kit := range h.all {
		kit.Close()
	}
}

// fleetServer serves the fleet on loopback listeners, each an origin of its
// own: probes to many ports spread the client's ephemeral ports over more
// four-tuples, so a fast run does not run out of them to TIME_WAIT, and an
// HTTPS fleet spreads its servers over many origins, as real hosts are.
type fleetServer struct {
	handler *fleetHandler
	tls     *tlsFleet // nil: plain HTTP
	addrs   []string
	servers []*http.Server
	wg      sync.WaitGroup
}

func startFleet(servers []simServer, listeners int, watch bool, tf *tlsFleet) (*fleetServer, error) {
	fs := &fleetServer{handler: newFleetHandler(servers), tls: tf}
	fs.handler.watch = watch
	for range max(listeners, 1) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fs.close()
			return nil, fmt.Errorf("listen for the simulated servers on 127.0.0.1: %w", err)
		}
		srv := &http.Server{Handler: fs.handler, ReadHeaderTimeout: 10 * time.Second}
		fs.addrs = append(fs.addrs, l.Addr().String())
		fs.servers = append(fs.servers, srv)
		fs.wg.Add(1)
		go func() {
			defer fs.wg.Done()
			if tf != nil {
				_ = tf.serve(srv, l) // ends with ErrServerClosed at close
				return
			}
			_ = srv.Serve(l) // ends with ErrServerClosed at close
		}()
	}
	return fs, nil
}

func (fs *fleetServer) url(s simServer) string {
	scheme := "http://"
	if fs.tls != nil {
		scheme = "https://"
	}
	return scheme + fs.addrs[s.listener] + s.path
}

func (fs *fleetServer) close() {
	fs.handler.close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range fs.servers {
		_ = srv.Shutdown(ctx)
	}
	fs.wg.Wait()
}

// daemonSettings are the defaults written into the fleet's mcpwatch.yml.
type daemonSettings struct {
	interval         time.Duration
	timeout          time.Duration
	concurrency      int
	stdioConcurrency int
}

// writeHTTPConfig writes mcpwatch.yml and its lock for an HTTP fleet. With
// fingerprints the lock holds each tool's schema fingerprint and
// description hash (mcpwatch lock --fingerprints), which every probe then
// computes and compares.
func writeHTTPConfig(dir string, fs *fleetServer, servers []simServer, ds daemonSettings, fingerprints bool, calls callSpec, watch bool) (string, error) {
	extra := ""
	if watch {
		extra = ", watch_changes: true"
	}
	var b strings.Builder
	writeDefaults(&b, ds)
	b.WriteString("servers:\n")
	lock := lockstore.New()
	for _, s := range servers {
		tools := toolsOf(s.toolSet, s.readOnlyTool)
		fmt.Fprintf(&b, "  %s: {url: %q, transport: http%s%s}\n", s.name, fs.url(s), extra, calls.configFor(toolNames(tools)))
		observed, err := observedTools(tools)
		if err != nil {
			return "", err
		}
		if s.driftedLock {
			observed = append(observed, lockstore.Observed{Name: "retired_tool"})
		}
		lock.Set(s.name, lockstore.NewEntry(observed, fingerprints))
	}
	return writeConfigAndLockFile(dir, b.String(), lock.Marshal())
}

func observedTools(tools []probetest.Tool) ([]lockstore.Observed, error) {
	out := make([]lockstore.Observed, len(tools))
	for i, t := range tools {
		schema, err := json.Marshal(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("encode the schema of %s: %w", t.Name, err)
		}
		out[i] = lockstore.Observed{Name: t.Name, Description: t.Description, InputSchema: schema}
	}
	return out, nil
}

func writeDefaults(b *strings.Builder, ds daemonSettings) {
	fmt.Fprintf(b, "# written by mcpwatch-scale\ndefaults:\n  schedule: \"@every %s\"\n  timeout: %s\n", ds.interval, ds.timeout)
	if ds.concurrency > 0 {
		fmt.Fprintf(b, "  concurrency: %d\n", ds.concurrency)
	}
	if ds.stdioConcurrency > 0 {
		fmt.Fprintf(b, "  stdio_concurrency: %d\n", ds.stdioConcurrency)
	}
	b.WriteString("lock: mcp-tools.lock.json\n")
}

func writeConfigAndLock(dir, config string, lock map[string][]string) (string, error) {
	lockJSON, err := json.MarshalIndent(lock, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode the lock: %w", err)
	}
	return writeConfigAndLockFile(dir, config, lockJSON)
}

func writeConfigAndLockFile(dir, config string, lockJSON []byte) (string, error) {
	if err := os.WriteFile(dir+"/mcp-tools.lock.json", lockJSON, 0o600); err != nil {
		return "", fmt.Errorf("write the lock: %w", err)
	}
	path := dir + "/mcpwatch.yml"
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		return "", fmt.Errorf("write the configuration: %w", err)
	}
	return path, nil
}
