// Command mcpwatch-scale measures mcpwatch at scale, against the README's performance targets: it
// serves N simulated MCP servers over streamable HTTP on loopback (or
// configures N stdio test servers), runs the built `mcpwatch serve` over
// them as a subprocess, and reports probes per second achieved against
// scheduled, scheduling lag, CPU per 1,000 probes, peak RSS, /metrics
// scrape latency and size, skipped probes, schedule drift and, for stdio,
// processes left behind. It also times `mcpwatch check` of many stdio
// servers against one, and judges the targets from a file of results.
//
//	mcpwatch-scale -n 1000 -interval 15s -duration 60s
//	mcpwatch-scale -mode stdio -n 100 -interval 1s -duration 120s -timeout 500ms
//	mcpwatch-scale -mode check
//	mcpwatch-scale -summary bench-out/scale.jsonl
//
// It is a measuring tool, not a test: figures vary with the machine's load,
// which every report shows.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpwatch-scale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := scaleOptions{out: stderr}
	var (
		jsonOut       string
		summary       string
		checkKind     string
		checkEra      string
		checkDelay    time.Duration
		checkMany     int
		checkRuns     int
		summaryStrict bool
		pf            = preflightOptions{}
		pfServers     string
		floorPlanPath string
		runnerStarts  int
		runnerProbes  int
		runnerIdle    time.Duration
		runnerFlags   []string
		setFlags      []string
		failPercent   float64
		slowPercent   float64
	)
	fs.StringVar(&o.mode, "mode", "http", "http (simulated streamable HTTP servers), stdio (mcpwatch-testserver processes), npx (the pinned npm servers through npx, CPU counted with the servers'), runners (what a start and a live probe cost per runner), check (time mcpwatch check) or preflight (mcpwatch check vs the reference Python preflight)")
	fs.StringVar(&o.label, "label", "", "name of the run in reports and -json (default MODE-N)")
	fs.IntVar(&o.n, "n", 1000, "servers")
	fs.DurationVar(&o.interval, "interval", 15*time.Second, "schedule of every server (@every)")
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "probe window, rounded up to whole intervals")
	fs.DurationVar(&o.warmup, "warmup", 0, "wait this much longer after the first round before the window opens (a schedule that settles in its second round)")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "probe timeout written into the configuration")
	fs.IntVar(&o.concurrency, "concurrency", 0, "defaults.concurrency written into the configuration (default: none written, mcpwatch's own default)")
	fs.IntVar(&o.stdioConcurrency, "stdio-concurrency", 0, "defaults.stdio_concurrency (0: mcpwatch's default)")
	fs.IntVar(&o.listeners, "listeners", 4, "loopback ports the simulated servers are spread over")
	fs.Float64Var(&failPercent, "fail", 5, "percent of simulated servers answering 401 or 500")
	fs.Float64Var(&slowPercent, "slow", 5, "percent of simulated servers adding 50-200 ms to every reply")
	fs.DurationVar(&o.slowDelay, "slow-delay", 0, "what every slow server adds to each reply instead of 50-200 ms (e.g. 200ms)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the fleet's shape")
	fs.IntVar(&o.scrapes, "scrapes", 20, "scrapes of /metrics at one a second after the window, for latency and size")
	fs.DurationVar(&o.promInterval, "prom-interval", 15*time.Second, "scrape interval during the window, as Prometheus would scrape (counted in the CPU)")
	fs.StringVar(&o.mcpwatch, "mcpwatch", "bin/mcpwatch", "the built mcpwatch binary")
	fs.StringVar(&o.testserver, "testserver", "bin/mcpwatch-testserver", "the built mcpwatch-testserver binary (stdio and check modes)")
	fs.StringVar(&o.pprofDir, "pprof", "", "run mcpwatch with --web.enable-pprof and save a CPU profile of the window and a heap profile here")
	fs.StringVar(&o.goMemLimit, "gomemlimit", "", "GOMEMLIMIT in mcpwatch's environment (e.g. 400MiB), as a deployment may set it")
	fs.BoolVar(&o.fingerprints, "fingerprints", false, "http mode: write the lock with schema fingerprints and description hashes (mcpwatch lock --fingerprints)")
	fs.IntVar(&o.calls.contracts, "contracts", 0, "http mode: contracts per server, for its first tools, called on a call_schedule of -call-interval")
	fs.IntVar(&o.calls.auto, "auto-calls", 0, "http mode: every server's first tool is annotated read-only and needs no input, and each says calls: auto (auto_calls: N), called on -call-interval")
	fs.DurationVar(&o.calls.interval, "call-interval", 5*time.Minute, "with -contracts or -auto-calls: the call_schedule (@every)")
	fs.BoolVar(&o.watch, "watch", false, "http mode: watch_changes: true on every server; the fleet holds each listener's stream open (the cost of 1 listener per server)")
	fs.BoolVar(&o.floor, "floor", false, "http mode: after mcpwatch, replay the requests it sent in one interval from a minimal client (its own process, kept-alive connections, same schedule, answers read and not parsed), and report mcpwatch's CPU per probe as a ratio to that floor")
	fs.BoolVar(&o.tls, "tls", false, "http mode: serve the fleet over HTTPS (HTTP/1.1 only) with a certificate of a test CA made for the run, which mcpwatch and the floor trust through SSL_CERT_FILE; -listeners defaults to 1000 origins")
	fs.BoolVar(&o.h2, "h2", false, "with -tls: the fleet offers HTTP/2 (ALPN h2) as well as HTTP/1.1")
	fs.StringVar(&floorPlanPath, "floor-plan", "", "floor-client mode (run by -floor): the plan to replay")
	fs.BoolVar(&o.keep, "keep", false, "keep the work directory (configuration, lock, mcpwatch's log)")
	fs.StringVar(&jsonOut, "json", "", "append the result as one JSON line to this file")
	fs.StringVar(&summary, "summary", "", "judge the performance targets from this -json file, print them and exit")
	fs.StringVar(&checkKind, "check-config", "mcp.json", "check mode: mcp.json (all servers at once, as a client starts them) or mcpwatch.yml (its defaults)")
	fs.StringVar(&checkEra, "check-era", "mixed", "check mode: the servers' era: mixed (legacy and modern alternating), legacy or modern")
	fs.DurationVar(&checkDelay, "check-delay", 0, "check mode: each server sleeps this long before it starts (a server that waits on I/O at start)")
	fs.IntVar(&checkMany, "check-many", 5, "check mode: servers compared with one")
	fs.IntVar(&checkRuns, "check-runs", 5, "check and preflight modes: timed runs of each")
	fs.StringVar(&pf.python, "python", "python3", "preflight mode: the Python interpreter")
	fs.StringVar(&pf.server, "py-server", "testdata/python/stdio_server.py", "preflight mode: the Python test server")
	fs.StringVar(&pf.reference, "py-preflight", "testdata/python/preflight_reference.py", "preflight mode: the reference Python preflight")
	fs.StringVar(&pfServers, "preflight-servers", "1,5", "preflight mode: the numbers of servers compared, comma-separated")
	fs.IntVar(&runnerStarts, "runner-starts", 10, "runners mode: fresh starts of each runner")
	fs.IntVar(&runnerProbes, "runner-probes", 200, "runners mode: tools/list on each runner's session kept up")
	fs.DurationVar(&runnerIdle, "runner-idle", 20*time.Second, "runners mode: how long each runner's kept session is watched idle")
	fs.Func("runner", `runners mode: "LABEL=COMMAND ARG..." to measure (repeatable; default: a plain binary, node, npx and python3)`, func(v string) error {
		runnerFlags = append(runnerFlags, v)
		return nil
	})
	fs.Func("set", `npx mode: a line "KEY: VALUE" written under defaults: (repeatable; none: mcpwatch's defaults)`, func(v string) error {
		setFlags = append(setFlags, v)
		return nil
	})
	fs.StringVar(&o.peers, "peers", "testdata/peers", "runners and npx modes: the folder of the pinned npm servers")
	fs.BoolVar(&summaryStrict, "strict", false, "with -summary: exit 1 when a target is missed or was not run")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mcpwatch-scale: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	o.failShare, o.slowShare = failPercent/100, slowPercent/100
	if o.tls && !flagSet(fs, "listeners") {
		o.listeners = tlsOrigins
	}
	if o.mode == "floor-client" {
		if err := floorClient(floorPlanPath, stdout); err != nil {
			fmt.Fprintf(stderr, "mcpwatch-scale: floor client: %v\n", err)
			return 1
		}
		return 0
	}

	if summary != "" {
		rs, err := readResults(summary)
		if err != nil {
			fmt.Fprintf(stderr, "mcpwatch-scale: %v\n", err)
			return 1
		}
		if !printSummary(stdout, rs) && summaryStrict {
			return 1
		}
		return 0
	}
	if err := o.validate(); err != nil {
		fmt.Fprintf(stderr, "mcpwatch-scale: %v\n", err)
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// report is a *result or a *checkResult: printed for people, and
	// appended to -json as it is.
	var report interface{ print(io.Writer) }
	var lines []any // appended to -json, one line each
	switch o.mode {
	case "runners":
		runners, cleanup, err := runnerList(runnerFlags, o.testserver, o.peers, pf.python)
		if err != nil {
			fmt.Fprintf(stderr, "mcpwatch-scale: %v\n", err)
			return 1
		}
		defer cleanup()
		report = measureRunners(ctx, runners, runnerStarts, runnerProbes, runnerIdle, stderr)
	case "npx":
		if o.label == "" {
			o.label = fmt.Sprintf("npx-%d", o.n)
		}
		r, err := runNpx(ctx, o, setFlags)
		if err != nil {
			fmt.Fprintf(stderr, "mcpwatch-scale: %s\n", indent(err.Error()))
			return 1
		}
		report = r
	case "preflight":
		var counts []int
		for _, f := range strings.Split(pfServers, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				fmt.Fprintf(stderr, "mcpwatch-scale: -preflight-servers: %q is not a number of servers\n", f)
				return 2
			}
			counts = append(counts, n)
		}
		pf.mcpwatch, pf.runs = o.mcpwatch, checkRuns
		rs, err := runPreflightComparisons(ctx, pf, counts)
		if err != nil {
			fmt.Fprintf(stderr, "mcpwatch-scale: %s\n", indent(err.Error()))
			return 1
		}
		report = preflightReports(rs)
		for _, r := range rs {
			lines = append(lines, r)
		}
	case "check":
		c, err := runCheckTiming(ctx, o.mcpwatch, o.testserver, checkKind, checkEra, checkDelay, checkMany, checkRuns)
		if err != nil {
			fmt.Fprintf(stderr, "mcpwatch-scale: %s\n", indent(err.Error()))
			return 1
		}
		report = c
	default:
		if o.label == "" {
			o.label = fmt.Sprintf("%s-%d", o.mode, o.n)
		}
		r, err := runScale(ctx, o)
		if err != nil {
			fmt.Fprintf(stderr, "mcpwatch-scale: %s\n", indent(err.Error()))
			return 1
		}
		report = r
	}
	report.print(stdout)
	if lines == nil {
		lines = []any{report}
	}
	for _, line := range lines {
		if jsonOut == "" {
			break
		}
		if err := appendJSON(jsonOut, line); err != nil {
			fmt.Fprintf(stderr, "mcpwatch-scale: %v\n", err)
			return 1
		}
	}
	return 0
}

func (o scaleOptions) validate() error {
	if err := o.calls.validate(o.mode); err != nil {
		return err
	}
	switch {
	case !slices.Contains([]string{"http", "stdio", "npx", "check", "preflight", "runners"}, o.mode):
		return fmt.Errorf("-mode %q: want http, stdio, npx, check, preflight or runners", o.mode)
	case (o.tls || o.h2) && o.mode != "http":
		return fmt.Errorf("-tls and -h2 need -mode http: they serve the simulated HTTP servers over HTTPS")
	case o.h2 && !o.tls:
		return fmt.Errorf("-h2 needs -tls: HTTP/2 is offered over TLS")
	case o.floor && o.mode != "http":
		return fmt.Errorf("-floor needs -mode http: it replays the requests of simulated HTTP servers")
	case o.n < 1:
		return fmt.Errorf("-n must be at least 1")
	case o.interval <= 0 || o.duration <= 0 || o.timeout <= 0:
		return fmt.Errorf("-interval, -duration and -timeout must be positive")
	case o.failShare < 0 || o.slowShare < 0 || o.failShare+o.slowShare > 1:
		return fmt.Errorf("-fail and -slow are percentages that add up to at most 100")
	}
	return nil
}

// tlsOrigins is how many origins an HTTPS fleet spreads its servers over
// unless -listeners says otherwise: remote servers are on hosts of their
// own, a few to a host at most (10 each in a fleet of 10,000).
const tlsOrigins = 1000

// flagSet reports whether the command line set the flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func appendJSON(path string, v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode the result: %w", err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644) //nolint:gosec // G302, G304: the results file the operator named with -json, readable like any build output
	if err != nil {
		return fmt.Errorf("append to %s: %w", path, err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		_ = f.Close() // the write error is the news
		return fmt.Errorf("append to %s: %w", path, err)
	}
	return f.Close()
}
