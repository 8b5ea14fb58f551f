package canary

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/issuer"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/probe"
)

// Server is what the table needs of one configured server.
type Server struct {
	Name string
	// How it runs, as written: its command and arguments, or its URL
	// (what the catalogue matches).
	Command string
	Args    []string
	URL     string
	// Credentials are those it is given, by name ("env:GITHUB_TOKEN").
	Credentials []string
	// Result is its probe; nil when it was not probed.
	Result *probe.Result
	// Contracts are every contract configured for it, disabled and
	// pending ones included; ContractsFile is where they are.
	Contracts     []contracts.Contract
	ContractsFile string
	// AutoCalls is how many calls its calls: auto makes (0: none).
	AutoCalls int
	// Catalogue names, by tool, the catalogue entries its contracts are
	// from, as init wrote them.
	Catalogue map[string]string
	// FromLock says Result holds the tools as the lock has them, by name
	// only (mcpwatch doctor starts no server): which of them are
	// annotated read-only cannot be told, so calls: auto is taken at its
	// word, and a note says there is no canary without claiming why.
	FromLock bool
	// Plan says how many calls a month the daemon makes of a contract at
	// the defaults, and why that is not its server's call_schedule
	// (config.Server.CallPlan); 0 calls: it is held, not called. nil: every
	// contract is called, and the calls are not counted.
	Plan func(contracts.Contract) (perMonth int, why string)
}

// Row is one line of the table: which canary watches the server's
// credential, or why none can.
type Row struct {
	Server string
	// Credential names what it is given ("env:GITHUB_TOKEN"; several
	// joined), or "-" for none.
	Credential string
	// Canary names the tool whose calls watch it, or "-".
	Canary string
	// Watched says a canary sees the credential.
	Watched bool
	// CallsAMonth is how many canary calls the daemon makes of the
	// server in 30 days at its schedules (those of the contracts that are
	// called, and of calls: auto's choice where it is known).
	CallsAMonth int
	// Note says how, or why not, in a sentence.
	Note string
	// Issuer says which of its credentials the services that issued them
	// checked, where, and what they said ("-" for none): a credential so
	// checked is watched without a canary.
	Issuer string
}

// NoCanary starts the note of a server whose credential no canary sees.
const NoCanary = "no canary can see this server's credential"

// Watch says which canary watches s's credential. A canary is a call that
// runs (a contract enabled and filled in, or calls: auto's choice); a
// server given no credential has nothing for one to watch, and one that
// was not probed cannot be told.
func Watch(s Server) Row {
	r := watchByCanary(s)
	r.Issuer = "-"
	if s.Result == nil || s.Result.Credentials == nil || len(s.Result.Credentials.Issuer) == 0 {
		return r
	}
	var checks []string
	for _, c := range s.Result.Credentials.Issuer {
		checks = append(checks, issuer.Describe(c))
	}
	r.Issuer = strings.Join(checks, "; ")
	judged := slices.ContainsFunc(s.Result.Credentials.Issuer, func(c probe.IssuerCheck) bool {
		return c.Verdict == probe.IssuerAccepted || c.Verdict == probe.IssuerRejected
	})
	switch {
	case !judged:
	case r.Watched:
		r.Note += "; its issuer checks it too, without a call"
	default:
		r.Watched = true
		r.Note = "its issuer checks it, without a call (no canary needed for the credential)"
	}
	return r
}

// watchByCanary is Watch's row as the server's canary calls alone make it.
func watchByCanary(s Server) Row {
	r := Row{Server: s.Name, Credential: "-", Canary: "-"}
	if len(s.Credentials) > 0 {
		r.Credential = strings.Join(s.Credentials, ", ")
	}
	// call is c's calls a month, why they are not call_schedule's, and
	// whether it is called at all; without a Plan every contract is,
	// uncounted.
	call := func(c contracts.Contract) (n int, why string, called bool) {
		if s.Plan == nil {
			return 0, "", true
		}
		n, why = s.Plan(c)
		return n, why, n > 0
	}
	var held []string // called on no schedule, and why
	for _, c := range s.Contracts {
		if c.Disabled || c.Pending() {
			continue
		}
		n, why, called := call(c)
		if !called {
			held = append(held, c.Tool+" ("+why+")")
		}
		r.CallsAMonth += n
	}
	res := s.Result
	switch {
	case res == nil:
		r.Note = "not probed"
		return r
	case res.Reason == probe.ReasonCredentialMissing:
		r.Note = NoCanary + ": the credential is empty (" + oneLine(res.Error) + ")"
		return r
	case !res.OK:
		r.Note = fmt.Sprintf("%s: the server could not be probed (%s: %s)", NoCanary, res.Reason, oneLine(res.Error))
		return r
	}

	var enabled, pending, proposed []string
	for _, c := range s.Contracts {
		switch {
		case c.Disabled:
			proposed = append(proposed, c.Tool)
		case c.Pending():
			pending = append(pending, c.Tool)
		case listed(res.Tools, c.Tool):
			if _, _, called := call(c); called {
				enabled = append(enabled, c.Tool)
			}
		}
	}
	how := "its contract"
	if s.FromLock && s.AutoCalls > 0 && len(enabled) == 0 && len(s.Credentials) > 0 {
		// The lock has no annotations: which tools calls: auto may call
		// is told at each probe, not here.
		r.Canary, r.Watched = "calls: auto", true
		r.Note = fmt.Sprintf("calls: auto watches %s, if the server annotates a tool read-only that needs no input (the lock does not say which; mcpwatch init's table does)", r.Credential)
		return r
	}
	if s.AutoCalls > 0 {
		auto := contracts.Auto(res.Tools, s.AutoCalls, func(tool string) bool {
			return hasContract(s.Contracts, tool) || Metered(s.Command, s.Args, s.URL, tool)
		})
		for _, c := range auto {
			n, _, _ := call(c)
			r.CallsAMonth += n
		}
		if len(enabled) == 0 {
			for _, c := range auto {
				enabled = append(enabled, c.Tool)
			}
			how = "calls: auto"
		}
	}
	if len(s.Credentials) == 0 {
		r.Note = "given no credential: nothing for a canary to watch"
		if len(enabled) > 0 {
			r.Canary = strings.Join(enabled, ", ")
			r.Note += " (its canaries still check that the tools answer)"
		}
		return r
	}
	if len(enabled) > 0 {
		r.Canary, r.Watched = strings.Join(enabled, ", "), true
		if id := s.Catalogue[enabled[0]]; id != "" && how == "its contract" {
			how = "vetted: the catalogue's entry " + id
		}
		r.Note = fmt.Sprintf("%s (%s) watches %s", enabled[0], how, r.Credential)
		if i := slices.IndexFunc(s.Contracts, func(c contracts.Contract) bool { return c.Tool == enabled[0] }); i >= 0 {
			if _, why, _ := call(s.Contracts[i]); why != "" {
				r.Note += "; paced: " + why
			}
		}
		return r
	}
	file := s.ContractsFile
	if file == "" {
		file = "its contracts file"
	}
	switch {
	case len(held) > 0:
		r.Note = fmt.Sprintf("%s by default: %s; to call it anyway, give its contract in %s a \"schedule\" of its own", NoCanary, strings.Join(held, "; "), file)
	case len(pending) > 0:
		r.Note = fmt.Sprintf("%s yet: %s waits for its input (fill in the \"<fill in ...>\" values in %s)", NoCanary, list(pending), file)
	case len(proposed) > 0 && slices.ContainsFunc(proposed, func(tool string) bool { return readOnly(res.Tools, tool) }):
		// A read-only tool left disabled: its input could not be made.
		r.Note = fmt.Sprintf("%s: no contract in %s is enabled; proposed, disabled: %s (each $comment says what it takes)", NoCanary, file, list(proposed))
		if why := ungenerated(res.Tools, proposed); why != "" {
			r.Note += "; " + why
		}
	case len(proposed) > 0:
		r.Note = fmt.Sprintf("%s: none of its tools is annotated read-only; proposed, disabled in %s: %s (each takes the opt-ins its $comment names)", NoCanary, file, list(proposed))
	case s.FromLock:
		r.Note = fmt.Sprintf("%s: none of its %d locked tools has a contract that is called; write a contract for one that only reads (docs/contracts.md)", NoCanary, len(res.Tools))
	default:
		r.Note = fmt.Sprintf("%s: none of its %d tools is annotated read-only, and none reads as a query; write a contract for one that only reads (docs/contracts.md)", NoCanary, len(res.Tools))
	}
	return r
}

// column is one column of the table: its heading, and its cell of a row
// (escaped by Table).
type column struct {
	head string
	cell func(Row) string
}

// columns are the table's, in order; the last (the note) is not padded.
var columns = []column{
	{"SERVER", func(r Row) string { return r.Server }},
	{"CREDENTIAL", func(r Row) string { return r.Credential }},
	{"CANARY", func(r Row) string { return r.Canary }},
	{"CALLS/MONTH", func(r Row) string { return thousands(r.CallsAMonth) }},
	{"ISSUER CHECK", func(r Row) string { return r.Issuer }},
	{"WHY", func(r Row) string { return r.Note }},
}

// Table renders rows as an aligned text table, a column of each of
// columns. Every cell is escaped for a terminal: tool names and errors
// come from the server.
func Table(rows []Row) string {
	cells := [][]string{make([]string, len(columns))}
	for i, c := range columns {
		cells[0][i] = c.head
	}
	for _, r := range rows {
		line := make([]string, len(columns))
		for i, c := range columns {
			line[i] = sanitize.Text(c.cell(r))
		}
		cells = append(cells, line)
	}
	width := make([]int, len(columns))
	for _, line := range cells {
		for i, cell := range line {
			width[i] = max(width[i], len(cell))
		}
	}
	var b strings.Builder
	for _, line := range cells {
		for i, cell := range line {
			if i == len(line)-1 {
				b.WriteString(cell + "\n")
				continue
			}
			fmt.Fprintf(&b, "%-*s  ", width[i], cell)
		}
	}
	return b.String()
}

func listed(tools []probe.Tool, name string) bool {
	return slices.ContainsFunc(tools, func(t probe.Tool) bool { return t.Name == name })
}

func readOnly(tools []probe.Tool, name string) bool {
	i := slices.IndexFunc(tools, func(t probe.Tool) bool { return t.Name == name })
	return i >= 0 && !contracts.Needs(tools[i]).SideEffects
}

// ungenerated says why no input could be made for the first read-only
// tool among proposed that needs one ("get_file: input property fileKey:
// pattern ... cannot be generated"); "" when every such input could be.
func ungenerated(tools []probe.Tool, proposed []string) string {
	for _, name := range proposed {
		i := slices.IndexFunc(tools, func(t probe.Tool) bool { return t.Name == name })
		if i < 0 || contracts.Needs(tools[i]).SideEffects || !contracts.RequiresArguments(tools[i]) {
			continue
		}
		if _, err := GenerateInput(tools[i].InputSchema); err != nil {
			return name + ": " + err.Error()
		}
	}
	return ""
}

func hasContract(cs []contracts.Contract, tool string) bool {
	return slices.ContainsFunc(cs, func(c contracts.Contract) bool { return c.Tool == tool })
}

// list names up to 4 tools, and how many more.
func list(tools []string) string {
	if len(tools) <= 4 {
		return strings.Join(tools, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(tools[:4], ", "), len(tools)-4)
}

func oneLine(s string) string { return cut(s, 200) }
