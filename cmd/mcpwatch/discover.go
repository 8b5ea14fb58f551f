package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/discover"
	"github.com/mcpwatch/mcpwatch/internal/imports"
	"github.com/mcpwatch/mcpwatch/internal/preflight"
	"github.com/mcpwatch/mcpwatch/internal/util/jsondoc"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

const discoverHelp = `Usage:
  mcpwatch discover [flags]

Lists the MCP servers configured on this host: it reads the documented
config files of Claude Code (~/.claude.json, user and local scopes, and
.mcp.json), Claude Desktop, Cursor, VS Code (user mcp.json, profiles,
settings.json, .vscode/mcp.json), Windsurf, Codex (config.toml) and Gemini
CLI, in the home folder and in each project folder: the ones given with
--project (default: the working directory) and those Claude Code has
recorded. It reads no other file.

A server defined in several files (the same command, arguments and
variable names, or the same URL) is listed once, with every file that
defines it; the first one's definition is the one watched. Secrets are
redacted. A project's servers that its client was refused or not trusted
for, and the project files of folders that were not named with --project,
are listed as left out, with why: imports: [{discover: true}] does not run
them. To watch what it finds, write imports: [{discover: true}] in
mcpwatch.yml.

Exit codes: 0 every file found could be read; 2 usage error; 78 a file or
a server in it is unusable (listed, with the others).

Flags:
%s`

type discoverFlags struct {
	projects      []string
	clients       []string
	knownProjects bool
	out           outputFlags
}

func newDiscoverFlagSet(f *discoverFlags) *pflag.FlagSet {
	fs := newFlagSet("discover")
	fs.StringArrayVar(&f.projects, "project", []string{"."}, "a project `folder` to read project-scope files in (repeatable)")
	fs.BoolVar(&f.knownProjects, "known-projects", true, "also read the project folders Claude Code has recorded in ~/.claude.json")
	fs.StringArrayVar(&f.clients, "client", nil, "read only this `client`'s files (repeatable): "+clientNames())
	addOutputFlags(fs, &f.out, "write the list to this `file` instead of stdout", formatNames(discoverFormats))
	return fs
}

// discovered is what discover found: the files, and the servers in them.
type discovered struct {
	res     discover.Result
	servers []imports.FoundServer
}

// discoverFormats are discover's output formats.
var discoverFormats = formats[discovered]{
	preflight.FormatText: func(w io.Writer, d discovered) error { return writeDiscoverText(w, d.res, d.servers) },
	preflight.FormatJSON: func(w io.Writer, d discovered) error { return writeDiscoverJSON(w, d.res, d.servers) },
}

func cmdDiscover(_ context.Context, c *cli, args []string) int {
	var f discoverFlags
	fs := newDiscoverFlagSet(&f)
	var clients []discover.Client
	if code, ok := parseArgs(c, fs, discoverHelp, args, func() error {
		if fs.NArg() > 0 {
			return usagef("unexpected argument %q", fs.Arg(0))
		}
		for _, name := range f.clients {
			cl, ok := discover.ParseClient(name)
			if !ok {
				return usagef("--client %q is not a client discover knows; use one of: %s", name, clientNames())
			}
			clients = append(clients, cl)
		}
		return f.out.check()
	}); !ok {
		return code
	}

	host, err := discover.HostFromEnv(runtime.GOOS, c.getenv)
	if err != nil {
		fmt.Fprintf(c.stderr, "mcpwatch discover: %v\n", err)
		return exitConfig
	}
	host.Projects, host.KnownProjects, host.Clients = f.projects, f.knownProjects, clients
	res := discover.Find(host)
	servers := imports.FoundServers(res, config.BuiltinDefaults())

	if err := writeOutput(c, &f.out, discoverFormats, discovered{res, servers}); err != nil {
		fmt.Fprintf(c.stderr, "mcpwatch discover: %v\n", err)
		return exitFailed
	}
	if discoverProblems(res, servers) > 0 {
		return exitConfig
	}
	return exitOK
}

func clientNames() string {
	names := make([]string, 0, len(discover.Clients()))
	for _, c := range discover.Clients() {
		names = append(names, string(c))
	}
	return strings.Join(names, ", ")
}

func discoverProblems(res discover.Result, servers []imports.FoundServer) int {
	n := 0
	for _, f := range res.Files {
		if f.Err != nil {
			n++
		}
	}
	for _, s := range servers {
		if s.Err != nil {
			n++
		}
	}
	return n
}

func describeOrigin(o discover.Origin) string {
	return fmt.Sprintf("%s %s %s (%s)", o.Client, o.Scope, o.File, config.KeyPath(o.Key...))
}

func writeDiscoverText(w io.Writer, res discover.Result, servers []imports.FoundServer) error {
	fmt.Fprintf(w, "%d client config file(s):\n", len(res.Files))
	for _, f := range res.Files {
		what := fmt.Sprintf("%d server(s)", f.Servers)
		if f.Err != nil {
			what = "unreadable"
		}
		fmt.Fprintf(w, "  %-14s %-7s %s: %s\n", f.Client, f.Scope, sanitize.Text(f.Path), what)
		if f.Err != nil {
			for _, line := range strings.Split(f.Err.Error(), "\n") {
				fmt.Fprintf(w, "    - %s\n", sanitize.Text(line))
			}
		}
	}
	for _, s := range servers {
		fmt.Fprintln(w)
		name := s.Server.Name
		if s.Err != nil {
			fmt.Fprintf(w, "%s  (unusable)\n", sanitize.Text(s.Origins[0].Name))
			for _, line := range strings.Split(s.Err.Error(), "\n") {
				serverField(w, "problem", line)
			}
		} else {
			r := s.Server.Redacted()
			fmt.Fprintf(w, "%s  (%s)\n", sanitize.Text(name), r.Transport)
			writeServerFields(w, r)
		}
		label := "from"
		for _, o := range s.Origins {
			from := describeOrigin(o)
			if o.Name != name {
				from += " as " + o.Name
			}
			serverField(w, label, from)
			label = ""
		}
	}
	if len(res.LeftOut) > 0 {
		fmt.Fprintf(w, "\nleft out (not imported by discover: true):\n")
		for _, l := range res.LeftOut {
			fmt.Fprintf(w, "  %s from %s: %s\n", sanitize.Text(l.Origin.Name), sanitize.Text(describeOrigin(l.Origin)), sanitize.Text(l.Reason))
		}
	}
	_, err := fmt.Fprintf(w, "\n%d server(s) in %d file(s), %d problem(s), %d left out\n", len(servers), len(res.Files), discoverProblems(res, servers), len(res.LeftOut))
	return err
}

type discoverReport struct {
	Files   []discoverFile    `json:"files"`
	Servers []discoverServer  `json:"servers"`
	LeftOut []discoverLeftOut `json:"left_out"`
	OK      bool              `json:"ok"`
}

// discoverLeftOut is a definition found and not imported, and why.
type discoverLeftOut struct {
	discoverOrigin
	Reason string `json:"reason"`
}

type discoverFile struct {
	Client  discover.Client `json:"client"`
	Scope   discover.Scope  `json:"scope"`
	Path    string          `json:"path"`
	Project string          `json:"project,omitempty"`
	Servers int             `json:"servers"`
	Error   string          `json:"error,omitempty"`
}

type discoverServer struct {
	*config.RedactedServer
	Name    string           `json:"name"`
	Origins []discoverOrigin `json:"origins"`
	Error   string           `json:"error,omitempty"`
}

type discoverOrigin struct {
	Client  discover.Client `json:"client"`
	Scope   discover.Scope  `json:"scope"`
	File    string          `json:"file"`
	Key     string          `json:"key"`
	Name    string          `json:"name"`
	Project string          `json:"project"`
}

func writeDiscoverJSON(w io.Writer, res discover.Result, servers []imports.FoundServer) error {
	rep := discoverReport{Files: []discoverFile{}, Servers: []discoverServer{}, LeftOut: []discoverLeftOut{}, OK: discoverProblems(res, servers) == 0}
	for _, l := range res.LeftOut {
		o := l.Origin
		rep.LeftOut = append(rep.LeftOut, discoverLeftOut{Reason: l.Reason, discoverOrigin: discoverOrigin{Client: o.Client, Scope: o.Scope,
			File: o.File, Key: config.KeyPath(o.Key...), Name: o.Name, Project: o.Project}})
	}
	for _, f := range res.Files {
		df := discoverFile{Client: f.Client, Scope: f.Scope, Path: f.Path, Project: f.Project, Servers: f.Servers}
		if f.Err != nil {
			df.Error = f.Err.Error()
		}
		rep.Files = append(rep.Files, df)
	}
	for _, s := range servers {
		ds := discoverServer{Name: s.Server.Name}
		if s.Err != nil {
			ds.Name, ds.Error = s.Origins[0].Name, s.Err.Error()
		} else {
			r := s.Server.Redacted()
			ds.RedactedServer = &r
		}
		for _, o := range s.Origins {
			ds.Origins = append(ds.Origins, discoverOrigin{Client: o.Client, Scope: o.Scope, File: o.File,
				Key: config.KeyPath(o.Key...), Name: o.Name, Project: o.Project})
		}
		rep.Servers = append(rep.Servers, ds)
	}
	return jsondoc.Write(w, rep)
}
