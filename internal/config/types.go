// Package config reads what mcpwatch watches: mcpwatch.yml, and the
// servers it imports (MCP client config files, the host's clients, a
// registry), which its Loader's Sources read (internal/imports) and it
// decodes. It validates everything at load, itself reading no variable,
// secret file or network: it is data. ${VAR}, ${VAR:-default} and
// ${file:PATH} (internal/expand) are expanded only when a probe's target is
// built (internal/launch), so a rotated secret is seen without a restart.
package config

import (
	"sort"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/expand"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Config is a loaded, validated configuration.
type Config struct {
	Path     string   // the file it was loaded from ("" when built from an import alone)
	Defaults Defaults // defaults applied to every server that does not set its own
	Servers  []Server // sorted by name; imported servers included
	Lock     string   // lock file path, relative paths resolved against the config file's directory
	// Ignore names servers that are configured but not probed for now (a
	// broken server that must not block the others): they are left out of
	// Servers, and their lock entries are kept as they are.
	Ignore  []string
	Ignored []Server // the servers Ignore left out, for a --server that names one
	// starterLock is the lock the starter contracts files were looked for
	// beside (see starter.go).
	starterLock string
}

// Defaults apply to every server unless it sets its own.
type Defaults struct {
	Timeout          time.Duration // per probe; default 10s
	StartTimeout     time.Duration // per probe of a command that installs before it runs, until it has started once; default 120s
	Schedule         string        // cron expression or @every; default "@every 30s"
	Concurrency      int           // probes at once; default 128
	StdioConcurrency int           // stdio probes at once; default 8
	Era              probe.Era     // default auto
	InheritEnv       bool          // stdio servers get the whole environment; default false (the minimal one)
	MaxMessageBytes  int64         // default 4 MiB
	CallSchedule     string        // canary calls; default "@every 5m"
	CallTimeout      time.Duration // per canary call, retries included; 0: the server's timeout
	AutoCalls        int           // calls: auto for every server: at most this many auto-chosen calls; 0: off
	StdioMode        string        // how serve probes a stdio server: StdioLive (default) or StdioFresh
	RestartEvery     time.Duration // a live stdio server is started afresh once it has run this long; zero: RestartAfter's default
	LiveSessions     int           // stdio servers serve keeps running at once, at most; default 64
	// NoIssuerCheck turns off asking the services that issued the
	// servers' credentials about them (issuer_check: false); each server
	// may say otherwise.
	NoIssuerCheck bool
	// IssuerInterval is how often one credential is asked about at most;
	// default 15m.
	IssuerInterval time.Duration
}

// How serve probes a stdio server (stdio_mode).
const (
	// StdioLive keeps the server running between probes: a probe is
	// tools/list on it (see probe.Live).
	StdioLive = "live"
	// StdioFresh starts the server for each probe and ends it after.
	StdioFresh = "fresh"
)

// Server is one MCP server to watch. String values may hold ${...}
// references; they are kept unexpanded here and expanded by the probe's
// build of a target (internal/launch).
type Server struct {
	Name   string // unique key; the metrics' server label
	Source string // file that defined it

	Command    string
	Args       []string
	Env        map[string]string
	EnvFile    string // a dotenv file read at every probe (VS Code envFile); Env wins over it
	Dir        string
	InheritEnv bool // defaults applied
	// inheritEnvSet records that the file set inherit_env for the server,
	// which then overrides defaults.inherit_env.
	inheritEnvSet bool

	URL       string
	Transport probe.Transport
	Headers   map[string]string
	CAFile    string
	Insecure  bool
	Auth      *Auth // OAuth; nil for none (or a static header)

	Timeout time.Duration // defaults applied
	// StartTimeout is the deadline of a probe while the server's command
	// may still be installing what it runs (see Installs and
	// ProbeTimeout); defaults applied.
	StartTimeout time.Duration
	Schedule     string    // defaults applied
	Era          probe.Era // defaults applied
	// StdioMode and RestartEvery say how serve probes a command server
	// (defaults applied; empty and zero for a URL): StdioLive keeps it
	// running between probes, and starts it afresh once it has run for
	// RestartAfter (RestartEvery when set). check, lock and init start
	// every server once.
	StdioMode    string
	RestartEvery time.Duration
	Forbid       []string // tool-name glob patterns that must never appear
	// WatchChanges says whether the daemon holds a listening stream to the
	// (remote) server and re-probes it when it announces a change of its
	// tools; nil: when the server declares tools.listChanged.
	WatchChanges *bool

	// Contracts are the canary calls of the server, sorted by tool: from
	// its contracts file (ContractsFile) and its inline calls:. A tool
	// without one is never called.
	Contracts     []contracts.Contract
	ContractsFile string // the sidecar file, resolved; "" when none
	// Pending are contracts whose input still holds "<fill in ...>"
	// placeholders, and Proposed the tools of disabled ones ("disabled":
	// true, as mcpwatch init proposes them): neither is called, nor is in
	// Contracts.
	Pending  []contracts.Contract
	Proposed []string
	// Held are contracts that are not called on any schedule: a metered
	// tool that its plan bills from the first call, whose contract names
	// no schedule of its own (CallPlan says why). Not in Contracts.
	Held         []contracts.Contract
	CallSchedule string        // defaults applied
	CallTimeout  time.Duration // defaults applied: the server's timeout when unset
	// AutoCalls is how many calls calls: auto makes at most, besides the
	// contracts (0: none): tools annotated readOnlyHint: true that need
	// no argument, chosen from each listing by contracts.Auto. Defaults
	// applied; autoCallsSet records that the server set it (calls: auto
	// or auto_calls:), which then overrides defaults.calls: auto.
	AutoCalls    int
	autoCallsSet bool
	// AllowDestructive are the tools whose contracts may call them although
	// they are destructive (the opt-in beside the contract's
	// allowSideEffects).
	AllowDestructive []string
	// NoIssuerCheck says the services that issued the server's credentials
	// are not asked about them (issuer_check: false; defaults applied,
	// issuerCheckSet recording that the server set it).
	NoIssuerCheck  bool
	issuerCheckSet bool
	// ExpectedTools are the tools an imported mcp-probe config expects:
	// with a contracts file, each should have a contract (coverage).
	ExpectedTools []string

	// overlay marks an entry of mcpwatch.yml with neither command nor url:
	// settings for the imported server of its name (overlay.go), the keys
	// it set in overlaySet. Neither survives Load.
	overlay    bool
	overlaySet map[string]bool
	// callChecks are the checks of its call keys that need every contract
	// of the server, a starter file's included: checkCalls makes them
	// once that is read.
	callChecks []callCheck

	// Inputs resolve VS Code ${input:ID} references.
	Inputs map[string]expand.Input
	// BaseDir is where relative paths start: the directory of the file
	// that defined the server (the project folder for .vscode/ and .cursor/).
	BaseDir string
	// Workspace answers ${workspaceFolder} for servers imported from VS Code.
	Workspace string
	// PublicOnly, for a registry server imported without private_remotes,
	// is the next step a refused address names: its probes connect only
	// to public addresses (probe.Target.PublicOnly), since the registry
	// chose its URL and headers. Empty: any address.
	PublicOnly string
}

// HasCalls reports whether the server has canary calls to make: contracts,
// or calls: auto.
func (s Server) HasCalls() bool { return len(s.Contracts) > 0 || s.AutoCalls > 0 }

// Server returns the server called name.
func (c *Config) Server(name string) (Server, bool) {
	i := sort.Search(len(c.Servers), func(i int) bool { return c.Servers[i].Name >= name })
	if i < len(c.Servers) && c.Servers[i].Name == name {
		return c.Servers[i], true
	}
	return Server{}, false
}
