package config

// mcpwatch.yml, every key (testdata/full.yml is a complete example):
//
//	defaults:                    # apply to every server that does not set its own
//	  timeout: 10s               # one deadline per probe (Go duration, > 0)
//	  start_timeout: 2m          # the deadline of a command that installs before it runs
//	                             # (npx, uvx, pipx run, bunx, pnpm dlx, docker run) until it has started
//	  schedule: "@every 30s"     # cron expression (5 fields) or descriptor (@every 1m, @hourly)
//	  concurrency: 128           # probes at once (>= 1)
//	  stdio_concurrency: 8       # stdio processes at once (>= 1)
//	  era: auto                  # auto | modern | legacy
//	  inherit_env: false         # true: stdio servers get mcpwatch's whole environment
//	  max_message_bytes: 4MiB    # integer bytes, or with a unit: B KB KiB MB MiB GB GiB
//	  call_schedule: "@every 5m" # canary calls, independent of schedule
//	  call_timeout: 10s          # one canary call with its retries; default timeout
//	  calls: auto                # every server: call one read-only tool that needs no input
//	  auto_calls: 1              # how many calls: auto makes at most
//	  stdio_mode: live           # serve keeps stdio servers running between probes (live), or starts one per probe (fresh)
//	  restart_every: 5m          # a live stdio server is started afresh once it has run this long (default: 15 x its schedule's interval)
//	  live_sessions: 64          # stdio servers kept running at once, at most (>= 1)
//	  issuer_check: true         # ask the service that issued each credential whether it takes it
//	  issuer_check_interval: 15m # how often one credential is asked about, at most (>= 1m)
//	lock: mcp-tools.lock.json    # default: mcp-tools.lock.json next to this file
//	imports:                     # client config files whose servers are watched as they are
//	  - .mcp.json                # a path, or a mapping:
//	  - {path: ~/.config/Claude/claude_desktop_config.json, optional: true, exclude: [legacy]}
//	inputs:                      # answers VS Code ${input:ID}; never prompted for
//	  api-key: {env: API_KEY}    # from a variable, or
//	  gh-token: {file: ./secrets/gh}  # from a file (one trailing newline trimmed)
//	ignore: [flaky]              # servers not probed for now; their lock entries are kept
//	servers:
//	  report:                    # the name: the metrics' server label
//	    command: ./bin/reportserver   # a process mcpwatch starts ...
//	    args: [--verbose]
//	    env: {REPORT_API_TOKEN: "${file:./secrets/token}"}
//	    cwd: .                   # default: this file's directory
//	    inherit_env: false       # overrides defaults.inherit_env
//	    timeout: 5s              # overrides defaults.timeout
//	    start_timeout: 5m        # overrides defaults.start_timeout
//	    stdio_mode: live         # overrides defaults.stdio_mode
//	    restart_every: 5m        # overrides defaults.restart_every
//	    schedule: "@every 15s"   # overrides defaults.schedule
//	    era: auto                # overrides defaults.era
//	    forbid: ["delete_*"]     # tool-name globs that must never appear (* matches any characters, / too)
//	    issuer_check: true       # overrides defaults.issuer_check
//	    contracts: report.tools.json  # canary calls: an mcp-probe sidecar file (see calls.go)
//	    calls: {list_report_dates: {expect: {contains: "2026"}}}  # ... or inline
//	    call_schedule: "@every 5m"    # overrides defaults.call_schedule
//	    call_timeout: 10s        # one call with its retries; default the server's timeout
//	    allow_destructive_calls: []   # destructive tools a contract may call anyway
//	  remote:
//	    url: https://mcp.example.com/mcp   # ... or a remote server
//	    transport: auto          # auto (streamable HTTP, falling back to SSE) | http | sse (probe.ParseTransport)
//	    headers: {Authorization: "Bearer ${TOKEN}"}
//	    tls: {ca_file: ./ca.pem, insecure_skip_verify: false}
//	    watch_changes: true      # hold a stream for tools/list_changed and re-probe at once;
//	                             # default: when the server declares tools.listChanged
//	    auth: {type: oauth, grant: client_credentials, client_id: mcpwatch, client_secret: "${file:./secret}"}  # see auth.go
//
// Unknown keys are errors at every level. Relative paths (imports, lock,
// input files, cwd, ca_file, a command holding a "/", ${file:...}) start at
// the directory of the file that names them; "~/" starts at $HOME. String
// values of command, args, env, cwd, url, headers and ca_file may hold
// ${...} references (internal/expand): their syntax is checked at load, their
// values are read at every probe (internal/launch's Build), and launch.Check reports
// the ones that cannot be read now.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/knadh/koanf/maps"
	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/mcpwatch/mcpwatch/internal/expand"
	"github.com/mcpwatch/mcpwatch/internal/util/bytesize"
	"github.com/mcpwatch/mcpwatch/internal/util/readfile"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/internal/util/suggest"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Load reads, validates and normalizes an mcpwatch.yml; every problem
// found is returned, joined, each naming the file, the key and the fix.
// No variable or secret file is read (see launch.Build, launch.Check). Its Loader
// has no Sources: a file with imports fails (internal/imports reads them).
func Load(path string) (*Config, error) { return new(Loader).Load(path) }

// Load reads and validates an mcpwatch.yml and what it imports, read
// through l.Sources, and normalizes it (see the package's Load).
func (l *Loader) Load(path string) (*Config, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	data, err := readfile.Read(abs, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	raw, err := parseYAML(data)
	if err != nil {
		return nil, &FieldError{File: abs, Problem: err.Error()}
	}

	d := &decoder{file: abs}
	dir := filepath.Dir(abs)
	cfg := &Config{Path: abs, Lock: filepath.Join(dir, DefaultLockFile)}
	root, _ := d.object("", raw, true)

	if o, ok := root.sub("defaults", true); ok {
		decodeDefaults(o, &cfg.Defaults)
	}
	if lock, ok := root.string("lock"); ok {
		if lock == "" {
			d.errorf("lock", "is empty; name the lock file or remove the key for %s", DefaultLockFile)
		} else {
			cfg.Lock = resolveLoadPath(lock, dir)
		}
	}
	var inputs map[string]expand.Input
	if o, ok := root.sub("inputs", false); ok {
		inputs = decodeInputs(o, dir)
	}
	var imports []importSpec
	if v, ok := root.get("imports"); ok {
		imports = decodeImports(d, v, dir, l.Sources)
	}
	ignore, _ := root.strings("ignore")
	var own []Server
	if o, ok := root.sub("servers", false); ok {
		for _, name := range o.keys() {
			if s, ok := decodeServer(d, joinKey("servers", name), name, o.m[name], dir); ok {
				s.Inputs = inputs
				own = append(own, s)
			}
		}
	}
	root.finish()

	errs := d.errs
	all := own
	skippedImport := false
	for _, im := range imports {
		if im.source != nil {
			servers, srcErrs := l.importSource(abs, im, inputs)
			errs = append(errs, srcErrs...)
			for _, s := range servers {
				if !slices.Contains(im.exclude, s.Name) {
					all = append(all, s)
				}
			}
			continue
		}
		servers, err := loadClientConfig(l.Sources, im.path, inputs)
		var pe *fs.PathError
		switch {
		case err == nil:
		case im.optional && errors.Is(err, fs.ErrNotExist):
			skippedImport = true
			continue
		case errors.As(err, &pe):
			errs = append(errs, &FieldError{File: abs, Key: im.key, Err: err,
				Problem: fmt.Sprintf("cannot read %s (%s); fix the path, or write {path: ..., optional: true} if it may be absent", im.path, expand.FileProblem(err))})
			continue
		default:
			errs = append(errs, err)
			continue
		}
		for _, s := range servers {
			if !slices.Contains(im.exclude, s.Name) {
				all = append(all, s)
			}
		}
	}
	all, overlayErrs := applyOverlays(abs, all)
	errs = append(errs, overlayErrs...)
	servers, dupErrs := mergeServers(all)
	errs = append(errs, dupErrs...)
	servers, ignored, ignoreErrs := applyIgnore(abs, servers, ignore, skippedImport)
	errs = append(errs, ignoreErrs...)
	cfg.Ignore, cfg.Ignored = ignore, ignored
	if len(errs) == 0 && len(servers) == 0 && len(ignore) == 0 {
		errs = append(errs, &FieldError{File: abs, Problem: "no servers to watch; add servers: or imports:"})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	cfg.Servers = servers
	cfg.Normalize()
	// The call keys are checked against every contract of a server, its
	// starter file's too.
	if err := errors.Join(cfg.applyStarterFiles(), cfg.checkCalls()); err != nil {
		return nil, err
	}
	cfg.holdCalls()
	return cfg, nil
}

// applyIgnore leaves the servers named by ignore: out. A name that matches
// no server is an error (a typo would otherwise probe the server it meant
// to leave alone), unless an optional import was absent: it may come from
// there on another machine.
func applyIgnore(file string, servers []Server, ignore []string, skippedImport bool) (kept, ignored []Server, errs []error) {
	if len(ignore) == 0 {
		return servers, nil, nil
	}
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	for i, name := range ignore {
		if slices.Contains(names, name) || skippedImport {
			continue
		}
		hint := "remove it"
		if s := suggest.Closest(name, names); s != "" {
			hint = fmt.Sprintf("did you mean %s?", s)
		}
		errs = append(errs, &FieldError{File: file, Key: fmt.Sprintf("ignore[%d]", i),
			Problem: fmt.Sprintf("%q names no configured server; %s", name, hint)})
	}
	kept = servers[:0:0]
	for _, s := range servers {
		if slices.Contains(ignore, s.Name) {
			ignored = append(ignored, s)
		} else {
			kept = append(kept, s)
		}
	}
	return kept, ignored, errs
}

// parseYAML reads the file as koanf's YAML loading does (yamlParser, then
// every mapping keyed by strings), without koanf's flattening of every key
// and copy of the whole map, which nothing here reads: at 10,000 servers
// they took 2.6 times the parse itself. The map stays nested: server names
// with dots stay whole.
func parseYAML(data []byte) (map[string]any, error) {
	m, err := yamlParser{}.Unmarshal(data)
	if err != nil {
		// A type error from the YAML library quotes the value it met;
		// that value could be a secret pasted at the wrong level.
		if strings.Contains(err.Error(), "cannot unmarshal") {
			return nil, errors.New("not a mapping at the top level; start with keys such as servers:") //nolint:staticcheck // ST1005: the colon is the YAML key to write, not punctuation
		}
		// yaml.v3 spreads a list of errors over lines; one line reads better in a log.
		return nil, errors.New("not valid YAML: " + sanitize.OneLine(atProblemLine(err.Error(), data)))
	}
	if m == nil { // an empty file
		m = map[string]any{}
	}
	maps.IntfaceKeysToStrings(m) // a mapping with a key that is not a string decodes to map[any]any
	return m, nil
}

// yamlSyntaxLine is how yaml.v3 starts a syntax error: "yaml: line 2: ".
var yamlSyntaxLine = regexp.MustCompile(`^yaml: line (\d+): `)

// atProblemLine moves a YAML syntax error to the line of the problem.
// yaml.v3 names the line where the block being read began, not the line it
// could not read: a key indented one space too far on line 3 is reported as
// "yaml: line 2: did not find expected key" (or line 1). The problem's line
// is the first at which the file's beginning stops parsing, found by
// bisection (a few parses of a file that is small and already read).
func atProblemLine(msg string, data []byte) string {
	m := yamlSyntaxLine.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	fails := func(n int) bool { return yamlv3.Unmarshal(bytes.Join(lines[:n], nil), new(any)) != nil }
	if !fails(len(lines)) {
		return msg
	}
	ok, bad := 0, len(lines) // the first ok lines parse; the first bad do not
	for ok+1 < bad {
		if mid := (ok + bad) / 2; fails(mid) {
			bad = mid
		} else {
			ok = mid
		}
	}
	if reported, _ := strconv.Atoi(m[1]); bad <= reported {
		return msg
	}
	return fmt.Sprintf("yaml: line %d: %s", bad, msg[len(m[0]):])
}

func decodeDefaults(o *object, def *Defaults) {
	if v, ok := o.duration("timeout"); ok {
		def.Timeout = v
	}
	if v, ok := o.duration("start_timeout"); ok {
		def.StartTimeout = v
	}
	if v, ok := o.schedule("schedule"); ok {
		def.Schedule = v
	}
	for _, c := range []struct {
		key string
		dst *int
	}{{"concurrency", &def.Concurrency}, {"stdio_concurrency", &def.StdioConcurrency}, {"live_sessions", &def.LiveSessions}} {
		if v, ok := o.integer(c.key); ok {
			if v < 1 || v > 1<<20 {
				o.d.errorf(o.key(c.key), "must be at least 1, got %d", v)
			} else {
				*c.dst = int(v)
			}
		}
	}
	if era, ok := o.era(); ok {
		def.Era = era
	}
	decodeStdioSettings(o, &def.StdioMode, &def.RestartEvery)
	if v, ok := o.boolean("inherit_env"); ok {
		def.InheritEnv = v
	}
	if v, ok := o.schedule("call_schedule"); ok {
		def.CallSchedule = v
	}
	if v, ok := o.duration("call_timeout"); ok {
		def.CallTimeout = v
	}
	if v, ok := o.get("calls"); ok && v != "auto" {
		o.d.errorf(o.key("calls"), "under defaults: can only be auto (a read-only tool that needs no input is called on every server); contracts are per server")
	}
	def.AutoCalls, _ = decodeAutoCalls(o)
	if v, ok := o.boolean("issuer_check"); ok {
		def.NoIssuerCheck = !v
	}
	if v, ok := o.duration("issuer_check_interval"); ok {
		if v < time.Minute {
			o.d.errorf(o.key("issuer_check_interval"), "must be at least 1m: a service is asked about one credential no more often; got %s", v)
		} else {
			def.IssuerInterval = v
		}
	}
	if v, ok := o.get("max_message_bytes"); ok {
		if n, ok := parseSize(v); ok {
			def.MaxMessageBytes = n
		} else {
			o.d.errorf(o.key("max_message_bytes"), "is not a positive size; write %s, e.g. 4194304 or 4MiB", bytesize.Grammar)
		}
	}
	o.finish()
}

func decodeInputs(o *object, dir string) map[string]expand.Input {
	inputs := map[string]expand.Input{}
	for _, id := range o.keys() {
		in, ok := o.d.object(o.key(id), o.m[id], true)
		if !ok {
			continue
		}
		env, hasEnv := in.string("env")
		file, hasFile := in.string("file")
		in.finish()
		switch {
		case hasEnv == hasFile:
			o.d.errorf(o.key(id), "give exactly one of env: VAR or file: PATH")
		case hasEnv && env == "":
			o.d.errorf(in.key("env"), "is empty; name the variable that holds the input")
		case hasFile && file == "":
			o.d.errorf(in.key("file"), "is empty; name the file that holds the input")
		case hasFile:
			inputs[id] = expand.Input{File: resolveLoadPath(file, dir)}
		default:
			inputs[id] = expand.Input{Env: env}
		}
	}
	return inputs
}

// importSpec is one entry of imports:.
type importSpec struct {
	key      string // imports[i], for errors
	path     string
	optional bool     // a missing file is skipped (a desktop config absent on a server)
	exclude  []string // server names not to watch
	source   *Import  // host discovery or a registry, instead of a file
}

func decodeImports(d *decoder, v any, dir string, src Sources) []importSpec {
	list, ok := v.([]any)
	if !ok {
		d.errorf("imports", "expected a list of client config files, got %s", kindOf(v))
		return nil
	}
	var specs []importSpec
	for i, item := range list {
		key := fmt.Sprintf("imports[%d]", i)
		spec := importSpec{key: key}
		switch item := item.(type) {
		case string:
			spec.path = item
		case map[string]any:
			o, _ := d.object(key, item, true)
			spec.path, _ = o.string("path")
			spec.optional, _ = o.boolean("optional")
			spec.exclude, _ = o.strings("exclude")
			spec.source = decodeImportSource(o, spec.path != "", dir, src)
			o.finish()
			if spec.source != nil {
				specs = append(specs, spec)
				continue
			}
		default:
			d.errorf(key, "expected a path or {path: ..., optional: ..., exclude: [...]}, got %s", kindOf(item))
			continue
		}
		if spec.path == "" {
			d.errorf(key, "names no file; give the path of a client config such as .mcp.json")
			continue
		}
		spec.path = resolveLoadPath(spec.path, dir)
		specs = append(specs, spec)
	}
	return specs
}

// decodeServer reads one entry of servers:. What it leaves unset,
// Normalize sets.
func decodeServer(d *decoder, prefix, name string, v any, dir string) (Server, bool) {
	o, ok := d.object(prefix, v, true)
	if !ok {
		return Server{}, false
	}
	nerr := len(d.errs)
	s := Server{Name: name, Source: d.file, BaseDir: dir}
	s.Command, _ = o.string("command")
	s.URL, _ = o.string("url")
	if s.Command == "" && s.URL == "" {
		return decodeOverlay(d, o, s, dir)
	}
	var w written
	readShared(o, &s)
	w.cwd, w.hasCwd = o.string("cwd")
	s.InheritEnv, s.inheritEnvSet = o.boolean("inherit_env")
	w.transport, w.hasTransport = o.string("transport")
	if tls, ok := o.sub("tls", true); ok {
		s.CAFile, _ = tls.string("ca_file")
		s.Insecure, _ = tls.boolean("insecure_skip_verify")
		tls.finish()
	}
	if auth, ok := o.sub("auth", true); ok {
		s.Auth = decodeAuth(auth)
	}
	decodeProbeSettings(o, &s)
	if v, ok := o.boolean("watch_changes"); ok {
		s.WatchChanges = &v
	}
	decodeCalls(o, &s, dir)
	o.finish()

	ymlDialect.setTransport(d, prefix, &s, w)
	switch {
	case s.URL != "" && s.Command == "":
		misplaced(o, "applies only to command servers, and this one has a url; remove it",
			"command", "args", "env", "cwd", "inherit_env", "start_timeout", "stdio_mode", "restart_every")
	case s.Command != "" && s.URL == "":
		misplaced(o, "applies only to url servers, and this one has a command; remove it", "headers", "tls", "watch_changes")
	}
	ymlDialect.finish(d, prefix, &s, w, dir)
	return s, len(d.errs) == nerr
}

// MaxFileBytes is what a file read from the configuration may hold at
// most (see readfile, which also refuses a named pipe or a device): a
// configuration, a client config or a contracts file of a large fleet is a
// few MiB.
const MaxFileBytes = 8 << 20

// misplaced reports each of keys that o sets, saying problem.
func misplaced(o *object, problem string, keys ...string) {
	for _, k := range keys {
		if _, set := o.m[k]; set {
			o.d.errorf(o.key(k), "%s", problem)
		}
	}
}

// resolveLoadPath resolves a path read once, at load (imports, lock, input
// files): "~/" by expandHome, a relative path against dir.
func resolveLoadPath(p, dir string) string {
	if p == "" || strings.Contains(p, "${") {
		return p
	}
	if strings.HasPrefix(p, "~/") {
		p, _ = expand.Home(p, expand.ProcessLookup)
		return p
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// resolveServerPath makes a plain relative path of a server absolute
// against dir. A path holding a reference or starting with "~" is left for
// the probe's build (internal/launch), which resolves it after expansion
// with the probe's variables.
func resolveServerPath(p, dir string) string {
	if p == "" || strings.Contains(p, "${") || strings.HasPrefix(p, "~") || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// resolveCommand resolves a command that names a path ("./bin/server");
// a bare name ("npx") is looked up in PATH when the server starts.
func resolveCommand(cmd, dir string) string {
	if !strings.Contains(cmd, "/") {
		return cmd
	}
	return resolveServerPath(cmd, dir)
}

// mergeServers sorts servers by name and reports a name defined twice,
// naming both files.
func mergeServers(all []Server) ([]Server, []error) {
	sort.SliceStable(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	var errs []error
	out := all[:0:0]
	for i, s := range all {
		if i > 0 && all[i-1].Name == s.Name {
			prev := all[i-1]
			where := "in " + prev.Source + " and in " + s.Source
			if prev.Source == s.Source {
				where = "twice in " + s.Source
			}
			errs = append(errs, fmt.Errorf("server %q is defined %s; rename one, or list it under exclude: of its import", s.Name, where))
			continue
		}
		out = append(out, s)
	}
	return out, errs
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// era reads an era key. A protocol version there (2025-06-18, which YAML
// reads as a date) gets the same hint as any other wrong value.
func (o *object) era() (probe.Era, bool) {
	v, ok := o.get("era")
	if !ok {
		return "", false
	}
	if s, isString := v.(string); isString {
		if era, ok := parseEra(s); ok {
			return era, true
		}
	}
	o.d.errorf(o.key("era"), "is not an era; use auto, modern or legacy (the protocol version is negotiated, not configured)")
	return "", false
}

// decodeProbeSettings reads how and when a server is probed (timeout,
// start_timeout, schedule, era, stdio_mode, restart_every, forbid): the keys a server entry and an
// entry for an imported server (overlayKeys) both take.
func decodeProbeSettings(o *object, s *Server) {
	if v, ok := o.duration("timeout"); ok {
		s.Timeout = v
	}
	if v, ok := o.duration("start_timeout"); ok {
		s.StartTimeout = v
	}
	if v, ok := o.schedule("schedule"); ok {
		s.Schedule = v
	}
	if era, ok := o.era(); ok {
		s.Era = era
	}
	decodeStdioSettings(o, &s.StdioMode, &s.RestartEvery)
	s.Forbid, _ = o.strings("forbid")
	if v, ok := o.boolean("issuer_check"); ok {
		s.NoIssuerCheck, s.issuerCheckSet = !v, true
	}
}

// decodeStdioSettings reads how serve probes a stdio server: stdio_mode
// and restart_every.
func decodeStdioSettings(o *object, mode *string, restartEvery *time.Duration) {
	if v, ok := o.string("stdio_mode"); ok {
		switch v {
		case StdioLive, StdioFresh:
			*mode = v
		default:
			o.d.errorf(o.key("stdio_mode"), "%q is not a stdio mode; use live (the server runs between probes) or fresh (one process per probe)", v)
		}
	}
	if v, ok := o.duration("restart_every"); ok {
		*restartEvery = v
	}
}
