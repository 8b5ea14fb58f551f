package config

// Canary calls of a server (see the contracts package and docs/contracts-format.md):
//
//	servers:
//	  report:
//	    contracts: report.tools.json        # an mcp-probe sidecar file, read unchanged ...
//	    calls:                              # ... and/or the same fields inline
//	      list_report_dates: {expect: {contains: "2026"}}
//	    # calls: auto                       # or: call a read-only tool that needs no input
//	    auto_calls: 1                       # how many calls: auto makes at most (0: none)
//	    call_schedule: "@every 5m"          # default defaults.call_schedule ("@every 5m")
//	    call_timeout: 10s                   # all attempts of one call; default the server's timeout
//	    allow_destructive_calls: [reset_cache]  # destructive tools a contract may call
//
// Everything that can be told without the server is checked at load: the
// file and its contracts, a tool named in both places, an opt-in without a
// contract that allows side effects. Whether a tool may be called at all
// depends on its annotations, which only tools/list gives: that is decided
// before each call (contracts.Permit), never by calling.

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/expand"
	"github.com/mcpwatch/mcpwatch/internal/util/readfile"
)

// decodeCalls reads a server's call keys into s. o is the server's object.
func decodeCalls(o *object, s *Server, dir string) {
	byTool := map[string]contracts.Contract{}
	if file, ok := o.string("contracts"); ok {
		if file == "" {
			o.d.errorf(o.key("contracts"), "is empty; name a contracts file ({\"tools\": {NAME: {input, expect}}}) or remove the key")
		} else {
			s.ContractsFile = resolveLoadPath(file, dir)
			f, err := readContractsFile(s.ContractsFile)
			for _, e := range unjoin(err) {
				o.d.errorf(o.key("contracts"), "%s: %v", s.ContractsFile, e)
			}
			for name, c := range f.Tools {
				byTool[name] = c
			}
		}
	}
	auto, autoSet := decodeAutoCalls(o)
	s.AutoCalls, s.autoCallsSet = auto, autoSet
	if v, ok := o.get("calls"); ok {
		m, isMap := v.(map[string]any)
		if !isMap {
			if str, isString := v.(string); !isString || str != "auto" {
				o.d.errorf(o.key("calls"), "expected auto, or a mapping of tool names to contracts ({input: {...}, expect: {...}}), got %s", kindOf(v))
			}
		} else {
			raw := make(map[string]json.RawMessage, len(m))
			for name, c := range m {
				b, err := json.Marshal(c)
				if err != nil {
					o.d.errorf(joinKey(o.key("calls"), name), "cannot be read as JSON: %v", err)
					continue
				}
				raw[name] = b
			}
			f, err := contracts.ParseTools(o.key("calls"), raw)
			// One error per tool, each naming this file: ParseTools
			// names the key.
			for _, e := range append(unjoin(err), contractScheduleErrors(o.key("calls"), f)...) {
				o.d.errs = append(o.d.errs, &FieldError{File: o.d.file, Problem: e.Error(), Err: e})
			}
			for _, name := range f.Names() {
				if _, dup := byTool[name]; dup {
					o.d.errorf(joinKey(o.key("calls"), name), "has a contract in %s too; keep one of them", s.ContractsFile)
					continue
				}
				byTool[name] = f.Tools[name]
			}
		}
	}
	if v, ok := o.schedule("call_schedule"); ok {
		s.CallSchedule = v
	}
	if v, ok := o.duration("call_timeout"); ok {
		s.CallTimeout = v
	}
	s.AllowDestructive, _ = o.strings("allow_destructive_calls")

	names := make([]string, 0, len(byTool))
	for n := range byTool {
		names = append(names, n)
	}
	sort.Strings(names)
	s.setContracts(names, byTool)
	if s.overlay {
		// An imported server's: its contracts may be in the import's
		// toolsFile, so overlaid records these checks once they are joined.
		return
	}
	for i, tool := range s.AllowDestructive {
		s.callChecks = append(s.callChecks, callCheck{file: o.d.file, key: fmt.Sprintf("%s[%d]", o.key("allow_destructive_calls"), i), tool: tool})
	}
	for _, k := range []string{"call_schedule", "call_timeout"} {
		if _, set := o.m[k]; set {
			s.callChecks = append(s.callChecks, callCheck{file: o.d.file, key: o.key(k)})
		}
	}
}

// callCheck is a call key of a server to check against all its contracts:
// an allow_destructive_calls entry (tool), or call_schedule or
// call_timeout (no tool), which need a contract or calls: auto.
type callCheck struct {
	file, key, tool string
	// imported: the key is an overlay's, for a server imported from a
	// client configuration.
	imported bool
}

// checkCalls checks every server's call keys once all its contracts are
// known: inline, from its contracts file, its import's and its starter
// file (see starter.go).
func (c *Config) checkCalls() error {
	var errs []error
	for _, list := range [][]Server{c.Servers, c.Ignored} {
		for i := range list {
			s := &list[i]
			for _, ck := range s.callChecks {
				if p := s.checkCall(ck); p != "" {
					errs = append(errs, &FieldError{File: ck.file, Key: ck.key, Problem: p})
				}
			}
			s.callChecks = nil
		}
	}
	return errors.Join(errs...)
}

// checkCall is what is wrong with one call key of s, or "".
func (s *Server) checkCall(ck callCheck) string {
	if ck.tool == "" {
		if len(s.Contracts)+len(s.Pending) == 0 && s.AutoCalls == 0 {
			return "applies to canary calls, and this server has none; add contracts:, calls: or calls: auto, or remove it"
		}
		return ""
	}
	i := slices.IndexFunc(s.Contracts, func(c contracts.Contract) bool { return c.Tool == ck.tool })
	var c contracts.Contract
	switch j := slices.IndexFunc(s.Pending, func(c contracts.Contract) bool { return c.Tool == ck.tool }); {
	case i >= 0:
		c = s.Contracts[i]
	case j >= 0:
		c = s.Pending[j]
	case slices.Contains(s.Proposed, ck.tool):
		return "" // disabled: never called, whatever its opt-ins
	case ck.imported:
		return fmt.Sprintf("%q has no contract, here or in the imported server's, so nothing calls it; remove it, or add a contract for it", ck.tool)
	default:
		return fmt.Sprintf("%q has no contract, so nothing calls it; remove it, or add a contract for it", ck.tool)
	}
	if !c.AllowSideEffects {
		return fmt.Sprintf("the contract of %q does not say \"allowSideEffects\": true, which a tool that is not read-only needs as well; add it to the contract, or remove the opt-in", ck.tool)
	}
	return ""
}

// decodeAutoCalls reads calls: auto and auto_calls: of a server or of the
// defaults: how many calls calls: auto makes (auto_calls, else 1), and
// whether either key was set. auto_calls: 0 turns off the defaults'
// calls: auto for one server.
func decodeAutoCalls(o *object) (n int, set bool) {
	v, hasCalls := o.get("calls")
	auto := hasCalls && v == "auto"
	if auto {
		n, set = 1, true
	}
	if v, ok := o.integer("auto_calls"); ok {
		if v < 0 || v > 100 {
			o.d.errorf(o.key("auto_calls"), "must be from 0 (none) to 100, got %d", v)
			return n, set
		}
		n, set = int(v), true
	}
	return n, set
}

// setContracts sorts a server's contracts into those called, those
// waiting for their input, and proposals (disabled).
func (s *Server) setContracts(names []string, byTool map[string]contracts.Contract) {
	s.Contracts, s.Pending, s.Proposed = nil, nil, nil
	for _, n := range names {
		switch c := byTool[n]; {
		case c.Disabled:
			s.Proposed = append(s.Proposed, n)
		case c.Pending():
			s.Pending = append(s.Pending, c)
		default:
			s.Contracts = append(s.Contracts, c)
		}
	}
}

// readContractsFile reads a contracts file, as mcp-probe's toolsFile, and
// checks the schedules its contracts name.
func readContractsFile(path string) (contracts.File, error) {
	data, err := readfile.Read(path, MaxFileBytes)
	if err != nil {
		return contracts.File{}, fmt.Errorf("cannot read it (%s); fix the path", expand.FileProblem(err))
	}
	f, err := contracts.ParseFile(data)
	return f, errors.Join(append([]error{err}, contractScheduleErrors("tools", f)...)...)
}

// unjoin splits an errors.Join; nil gives none.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
