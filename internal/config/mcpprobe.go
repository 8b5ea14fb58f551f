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
		target, _ := o.string("target")
		transport, hasTransport := o.string("transport")
		s.Headers, _ = o.stringMap("headers")
		args, _ := o.strings("args")
		s.Env, _ = o.stringMap("env")
		s.ExpectedTools, _ = o.strings("expectedTools")
		forbidden, _ := o.strings("forbiddenTools")
		toolsFile, hasFile := o.string("toolsFile")

		isURL := strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://")
		t, known := probe.ParseTransport(transport)
		switch {
		case target == "":
			d.errorf(key, "has no target; give a URL (http, sse) or a command line (stdio)")
		case hasTransport && t == probe.TransportStdio, !hasTransport && !isURL:
			fields := strings.Fields(target)
			s.Command, s.Args, s.Transport = resolveCommand(fields[0], dir), append(fields[1:], args...), probe.TransportStdio
			s.Dir = dir
		default:
			s.URL, s.Transport = target, probe.TransportAuto
			if hasTransport {
				if !known || t == probe.TransportStdio && isURL {
					d.errorf(joinKey(key, "transport"), "%q is not a transport mcpwatch can probe a URL with; use http or sse", transport)
				}
				s.Transport = t
			}
		}
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
		checkServer(d, &s, serverKeys{prefix: key, transport: "transport", caFile: joinKey(key, "ca_file")})
		if len(d.errs) == nerr {
			out = append(out, s)
		}
	}
	return out
}
