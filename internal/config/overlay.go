package config

// A server imported from a client configuration (.mcp.json, an mcp-probe
// config, ...) is watched as it is there, and that file has no place for
// mcpwatch's own settings. An entry of the same name under servers: in
// mcpwatch.yml with neither command nor url adds them:
//
//	imports: [mcp-probe.config.json]
//	servers:
//	  datadog:                              # imported; this entry only adds
//	    allow_destructive_calls: [run_query]
//	    calls: auto
//	    timeout: 20s
//
// It may set the keys of overlayKeys; what it sets replaces the imported
// value, its contracts join those of the import's toolsFile.

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/contracts"
)

// overlayKeys are what an entry for an imported server may set: how and
// when mcpwatch probes and calls it, not what it is.
var overlayKeys = []string{
	"timeout", "start_timeout", "schedule", "era", "stdio_mode", "restart_every", "forbid", "issuer_check",
	"contracts", "calls", "auto_calls", "call_schedule", "call_timeout", "allow_destructive_calls",
}

// decodeOverlay reads an entry with neither command nor url: settings for
// an imported server of the same name, applied by applyOverlays.
func decodeOverlay(d *decoder, o *object, s Server, dir string) (Server, bool) {
	nerr := len(d.errs)
	s.overlay = true
	var other []string
	for k := range o.m {
		if !slices.Contains(overlayKeys, k) {
			other = append(other, k)
		}
	}
	if len(other) > 0 {
		sort.Strings(other)
		d.errorf(o.path, "neither command nor url is set; add command: (a process mcpwatch starts) or url: (a remote server). "+
			"(An entry for a server imported from a client configuration, which needs neither, may set only %s; this one sets %s.)",
			strings.Join(overlayKeys, ", "), strings.Join(other, ", "))
		o.finish()
		return s, false
	}
	decodeProbeSettings(o, &s)
	decodeCalls(o, &s, dir)
	o.finish()
	checkForbid(d, o.key("forbid"), s.Forbid)
	s.overlaySet = map[string]bool{}
	for k := range o.m {
		s.overlaySet[k] = true
	}
	return s, len(d.errs) == nerr
}

// applyOverlays applies the overlays among servers to the imported servers
// of their names, and returns the servers without them. An overlay that
// names no imported server is the error it always was: neither command
// nor url.
func applyOverlays(file string, servers []Server) ([]Server, []error) {
	var errs []error
	var out []Server
	var overlays []Server
	for _, s := range servers {
		if s.overlay {
			overlays = append(overlays, s)
		} else {
			out = append(out, s)
		}
	}
	for _, ov := range overlays {
		key := joinKey("servers", ov.Name)
		i := -1
		for j, s := range out {
			if s.Name == ov.Name && s.Source != file {
				i = j
			}
		}
		if i < 0 {
			errs = append(errs, &FieldError{File: file, Key: key, Problem: "neither command nor url is set; add command: (a process mcpwatch starts) or url: (a remote server); " +
				"or, to add settings to a server imported from a client configuration, name it as the import does (no imported server is called " + fmt.Sprintf("%q", ov.Name) + ")"})
			continue
		}
		s, problems := overlaid(out[i], ov, file, key)
		for _, p := range problems {
			errs = append(errs, &FieldError{File: file, Key: key + "." + p.key, Problem: p.problem})
		}
		out[i] = s
	}
	return out, errs
}

type overlayProblem struct{ key, problem string }

// overlaid is s with what ov sets.
func overlaid(s, ov Server, file, key string) (Server, []overlayProblem) {
	var problems []overlayProblem
	set := ov.overlaySet
	if set["timeout"] {
		s.Timeout = ov.Timeout
	}
	if set["start_timeout"] {
		s.StartTimeout = ov.StartTimeout
	}
	if set["schedule"] {
		s.Schedule = ov.Schedule
	}
	if set["era"] {
		s.Era = ov.Era
	}
	if set["stdio_mode"] {
		s.StdioMode = ov.StdioMode
	}
	if set["restart_every"] {
		s.RestartEvery = ov.RestartEvery
	}
	if set["forbid"] {
		s.Forbid = append(append([]string(nil), s.Forbid...), ov.Forbid...)
	}
	if set["call_schedule"] {
		s.CallSchedule = ov.CallSchedule
	}
	if ov.issuerCheckSet {
		s.NoIssuerCheck, s.issuerCheckSet = ov.NoIssuerCheck, true
	}
	if set["call_timeout"] {
		s.CallTimeout = ov.CallTimeout
	}
	if ov.autoCallsSet {
		s.AutoCalls, s.autoCallsSet = ov.AutoCalls, true
	}
	if set["contracts"] && s.ContractsFile != "" {
		problems = append(problems, overlayProblem{"contracts", fmt.Sprintf("the imported server has a contracts file already (%s); add contracts to it, or inline under calls:", s.ContractsFile)})
	} else if set["contracts"] {
		s.ContractsFile = ov.ContractsFile
	}
	// The contracts of both: the import's toolsFile and this entry's.
	byTool := map[string]contracts.Contract{}
	for _, c := range append(append([]contracts.Contract(nil), s.Contracts...), s.Pending...) {
		byTool[c.Tool] = c
	}
	proposed := s.Proposed
	for _, c := range append(append([]contracts.Contract(nil), ov.Contracts...), ov.Pending...) {
		if _, dup := byTool[c.Tool]; dup || slices.Contains(proposed, c.Tool) {
			problems = append(problems, overlayProblem{joinKey("calls", c.Tool), fmt.Sprintf("the imported server has a contract for %q already (in %s); keep one of them", c.Tool, s.ContractsFile)})
			continue
		}
		byTool[c.Tool] = c
	}
	names := make([]string, 0, len(byTool))
	for n := range byTool {
		names = append(names, n)
	}
	sort.Strings(names)
	s.setContracts(names, byTool)
	s.Proposed = append(append(s.Proposed, proposed...), ov.Proposed...)
	sort.Strings(s.Proposed)
	if set["allow_destructive_calls"] {
		s.AllowDestructive = ov.AllowDestructive
		for i := range s.AllowDestructive {
			s.callChecks = append(s.callChecks, callCheck{file: file, key: fmt.Sprintf("%s.allow_destructive_calls[%d]", key, i), tool: s.AllowDestructive[i], imported: true})
		}
	}
	return s, problems
}
