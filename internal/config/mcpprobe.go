package config

// An mcp-probe config (mcp-probe.config.json), imported as a client config
// so that its users can point mcpwatch at what they have:
//
//	{"servers": [{"name": "datadog", "target": "https://mcp.example.com/mcp",
//	  "transport": "http", "headers": {"Authorization": "Bearer ${DATADOG_MCP_TOKEN}"},
//	  "expectedTools": ["logs_query"], "forbiddenTools": ["delete_dashboard"],
//	  "toolsFile": "./datadog.tools.json"}]}
//
// target is a URL for transport http or sse (or none: detected), else a
// command line split at spaces (no shell quoting), with optional "args" and
// "env". forbiddenTools become forbid patterns, toolsFile the server's
// contracts, expectedTools what the contracts should cover. It is told from
// VS Code's format by servers being a list.

import (
	"fmt"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/util/glob"
	"github.com/mcpwatch/mcpwatch/probe"
)

// loadMcpProbe reads the servers of an mcp-probe config.
func loadMcpProbe(d *decoder, list []any, dir string) []Server {
	var out []Server
	seen := map[string]bool{}
	for i, item := range list {
		key := fmt.Sprintf("servers[%d]", i)
		o, ok := d.object(key, item, false)
		if !ok {
			continue
		}
		nerr := len(d.errs)
		name, _ := o.string("name")
		if name == "" {
			d.errorf(key, "has no name; give each server a \"name\"")
			continue
		}
		if seen[name] {
			d.errorf(key, "%q is defined twice; server names must be unique", name)
			continue
		}
		seen[name] = true
		key = joinKey("servers", name)
		s := Server{Name: name, Source: d.file, BaseDir: dir}
		var w written
		target, _ := o.string("target")
		w.transport, w.hasTransport = o.string("transport")
		readShared(o, &s)
		s.ExpectedTools, _ = o.strings("expectedTools")
		forbidden, _ := o.strings("forbiddenTools")
		toolsFile, hasFile := o.string("toolsFile")

		// target is a URL, or a command line split at spaces: by its
		// transport, else by its look.
		isURL := strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://")
		t, _ := probe.ParseTransport(w.transport)
		switch {
		case strings.TrimSpace(target) == "": // nothing to split into a command
			d.errorf(key, "has no target; give a URL (http, sse) or a command line (stdio)")
		case w.hasTransport && t == probe.TransportStdio, !w.hasTransport && !isURL:
			fields := strings.Fields(target)
			s.Command, s.Args = fields[0], append(fields[1:], s.Args...)
		default:
			s.URL, s.Args = target, nil
		}
		mcpProbeDialect.setTransport(d, key, &s, w)
		for _, f := range forbidden {
			// Names, not patterns: escape what a forbid glob reads.
			s.Forbid = append(s.Forbid, glob.Escape(f))
		}
		if hasFile {
			s.ContractsFile = resolveLoadPath(toolsFile, dir)
			f, err := readContractsFile(s.ContractsFile)
			for _, e := range unjoin(err) {
				d.errorf(joinKey(key, "toolsFile"), "%s: %v", s.ContractsFile, e)
			}
			s.setContracts(f.Names(), f.Tools)
		}
		mcpProbeDialect.finish(d, key, &s, written{}, dir)
		if len(d.errs) == nerr {
			out = append(out, s)
		}
	}
	return out
}
