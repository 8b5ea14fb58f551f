// Package discover finds the MCP servers configured on a host: it reads the
// documented config files of the MCP clients (Claude Code, Claude Desktop,
// Cursor, VS Code, Windsurf, Codex, Gemini CLI), user and project scopes,
// and lists each server once with every file that defines it.
//
// It reads only the files paths.go names (the clients' documented paths),
// in the user's home and in the project folders it is given and Claude
// Code has recorded; it walks no directory. It does not validate a server:
// internal/config decodes and checks what it returns, as for any imported
// client config.
package discover

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/mcpwatch/mcpwatch/internal/util/jsonc"
	"github.com/mcpwatch/mcpwatch/internal/util/readfile"
)

// Host says where to look.
type Host struct {
	OS         string // runtime.GOOS: decides where the desktop apps keep their files
	Home       string // the user's home folder
	AppData    string // %APPDATA% (Windows)
	ConfigHome string // $XDG_CONFIG_HOME, else ~/.config (Linux and the BSDs)
	CodexHome  string // $CODEX_HOME, else ~/.codex

	// Projects are folders to read project-scope files in (.mcp.json,
	// .cursor/mcp.json, .vscode/mcp.json, .codex/config.toml,
	// .gemini/settings.json).
	Projects []string
	// KnownProjects adds the folders Claude Code has recorded in
	// ~/.claude.json (every project it was started in) to Projects.
	KnownProjects bool
	// Clients limits discovery to these clients; empty: every one.
	Clients []Client

	// ReadFile and ReadDir read the host's files; tests watch them.
	// Defaults: a size-bounded read of regular files only, os.ReadDir.
	ReadFile func(path string) ([]byte, error)
	ReadDir  func(path string) ([]fs.DirEntry, error)
	// Stat looks a folder up, to tell whether two spellings of it are one
	// folder (consent recorded under one, a project named under another).
	// Default: os.Stat.
	Stat func(path string) (fs.FileInfo, error)
}

// HostFromEnv is the host mcpwatch runs on: its OS, and the folders the
// environment names (getenv is os.Getenv in production).
func HostFromEnv(goos string, getenv func(string) string) (Host, error) {
	h := Host{OS: goos, KnownProjects: true}
	h.Home = getenv("HOME")
	if goos == "windows" {
		h.Home = getenv("USERPROFILE")
		h.AppData = getenv("APPDATA")
	}
	if h.Home == "" {
		return Host{}, errors.New("cannot find the home folder: $HOME is not set")
	}
	h.ConfigHome = getenv("XDG_CONFIG_HOME")
	if h.ConfigHome == "" {
		h.ConfigHome = filepath.Join(h.Home, ".config")
	}
	if goos == "windows" && h.AppData == "" {
		h.AppData = filepath.Join(h.Home, "AppData", "Roaming")
	}
	h.CodexHome = getenv("CODEX_HOME")
	return h, nil
}

// Origin is one definition of a server: the file, and where in it.
type Origin struct {
	Client  Client
	Scope   Scope
	File    string
	Key     []string // the path of keys to the server's object in the file
	Name    string   // the name the file gives the server
	Project string   // the folder the client runs the server in (relative paths start there)
	// Spec is the server's object in the common client shape (see
	// formats.go); anything but an object is an error to report.
	Spec any
}

// Server is one server found, once however many files define it.
type Server struct {
	// Name is unique among the servers found: the name the first file
	// gives it, with "-CLIENT" (and then a number) added when another
	// server has that name already.
	Name string
	// Origins are the files that define it, the first one first: its
	// definition is the one watched.
	Origins []Origin
}

// File is one config file found.
type File struct {
	Client  Client
	Scope   Scope
	Path    string
	Project string // for a project-scope file
	Servers int    // how many servers it defines (disabled ones not counted)
	Err     error  // why it could not be read; its servers are then missing
}

// Result is what Find found.
type Result struct {
	Files   []File   // in reading order
	Servers []Server // sorted by name
	// LeftOut are the definitions found but not to be run, and why: a
	// project's servers its client was refused or not trusted for, and
	// the project scope of folders the user did not name (consent.go).
	LeftOut []LeftOut
}

// LeftOut is a definition found and not run.
type LeftOut struct {
	Origin Origin
	Reason string
}

// Err joins the errors of the files that could not be read.
func (r Result) Err() error {
	var errs []error
	for _, f := range r.Files {
		if f.Err != nil {
			errs = append(errs, f.Err)
		}
	}
	return errors.Join(errs...)
}

// Find reads every documented client config file on h and returns the
// servers they define, merged by identity: one server is the same command
// with the same arguments and variable names (or the same URL) wherever it
// is defined. A file that cannot be read is listed with its error, and the
// others are read all the same.
func Find(h Host) Result {
	h = h.withDefaults()
	var res Result
	var entries []Origin
	cs := consent{folders: newFolders(h.Stat)}
	seen := map[string]bool{}
	read := func(c candidate) []string {
		if seen[c.path] || !h.wants(c.client) {
			return nil
		}
		seen[c.path] = true
		if c.profiles != "" {
			dirs, err := h.ReadDir(c.path)
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					res.Files = append(res.Files, File{Client: c.client, Scope: c.scope, Path: c.path, Err: fmt.Errorf("read %s: %w", c.path, err)})
				}
				return nil
			}
			for _, d := range dirs {
				if d.IsDir() {
					p := c
					p.path, p.profiles = filepath.Join(c.path, d.Name(), c.profiles), ""
					seen[p.path] = true
					entries = append(entries, h.readFile(p, &res)...)
				}
			}
			return nil
		}
		found, projects := h.readFileProjects(c, &res, &cs)
		entries = append(entries, found...)
		return projects
	}

	var known []string
	for _, c := range h.userCandidates() {
		if projects := read(c); c.format == formatClaudeCode && h.KnownProjects {
			known = projects
		}
	}
	if h.wants(Gemini) {
		h.readGeminiTrust(&cs, &res)
	}
	named := uniqueDirs(h.Projects)
	isNamed := func(dir string) bool {
		return slices.ContainsFunc(named, func(n string) bool { return cs.folders.same(n, dir) })
	}
	for _, dir := range uniqueDirs(append(slices.Clone(h.Projects), known...)) {
		for _, c := range projectCandidates(dir) {
			read(c)
		}
	}
	kept := entries[:0]
	for _, o := range entries {
		if why := cs.leftOut(o, isNamed(o.Project)); why != "" {
			res.LeftOut = append(res.LeftOut, LeftOut{Origin: o, Reason: why})
			continue
		}
		kept = append(kept, o)
	}
	res.Servers = merge(kept)
	return res
}

// geminiTrustFile is where Gemini CLI records the folders its user trusts
// or not (its "trusted folders" setting).
func (h Host) geminiTrustFile() string {
	return filepath.Join(h.Home, ".gemini", "trustedFolders.json")
}

// readGeminiTrust reads Gemini CLI's trusted folders: a JSON object of
// folder to TRUST_FOLDER, TRUST_PARENT or DO_NOT_TRUST.
func (h Host) readGeminiTrust(cs *consent, res *Result) {
	path := h.geminiTrustFile()
	data, err := h.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err == nil {
		err = jsonc.Decode(path, data, false, &cs.gemini)
	}
	if err != nil {
		// Unreadable, it trusts nothing and refuses nothing: a named
		// folder's Gemini files are then read as with no record. Listed so
		// the user sees it.
		res.Files = append(res.Files, File{Client: Gemini, Scope: ScopeUser, Path: path, Err: fmt.Errorf("read %s: %w", path, err)})
	}
}

func (h Host) withDefaults() Host {
	if h.ReadFile == nil {
		h.ReadFile = readBounded
	}
	if h.ReadDir == nil {
		h.ReadDir = os.ReadDir
	}
	if h.Stat == nil {
		h.Stat = os.Stat
	}
	return h
}

func (h Host) wants(c Client) bool { return len(h.Clients) == 0 || slices.Contains(h.Clients, c) }

func (h Host) readFile(c candidate, res *Result) []Origin {
	found, _ := h.readFileProjects(c, res, nil)
	return found
}

// readFileProjects reads one candidate; a file that is not there is not
// listed. A user-scope file's record of project folders goes to cs.
func (h Host) readFileProjects(c candidate, res *Result, cs *consent) ([]Origin, []string) {
	data, err := h.ReadFile(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	f := File{Client: c.client, Scope: c.scope, Path: c.path, Project: c.project}
	if err != nil {
		f.Err = fmt.Errorf("read %s: %w", c.path, err)
		res.Files = append(res.Files, f)
		return nil, nil
	}
	entries, projects, err := parse(c, data, cs)
	f.Err = err
	var out []Origin
	for _, e := range entries {
		out = append(out, Origin{Client: c.client, Scope: e.scope, File: c.path, Key: e.key, Name: e.name, Project: e.project, Spec: e.spec})
	}
	f.Servers = len(out)
	res.Files = append(res.Files, f)
	return out, projects
}

// MaxFileBytes bounds a client config file read, by discovery and by an
// import of the file alike (one limit): ~/.claude.json holds Claude Code's
// history too, but a file past this is not a config, and reading and
// decoding one costs several times its size.
const MaxFileBytes = 8 << 20

// readBounded reads a regular file (never a FIFO or a device, which could
// block or never end) of at most MaxFileBytes.
func readBounded(path string) ([]byte, error) {
	return readfile.Read(path, MaxFileBytes)
}

// uniqueDirs are dirs made absolute, each folder once: a folder named
// twice, or under two spellings through a symlink (the configuration's
// folder reached through one, and named under projects: by its real
// path), keeps its first spelling.
func uniqueDirs(dirs []string) []string {
	var out []string
	seen := map[string]bool{} // by the folder's real path
	for _, d := range dirs {
		if d == "" {
			continue
		}
		d = cleanDir(d)
		real := d
		if r, err := filepath.EvalSymlinks(d); err == nil {
			real = r
		}
		if !seen[real] {
			seen[real] = true
			out = append(out, d)
		}
	}
	return out
}

// merge lists each server once: definitions with the same identity become
// one server with several origins, in reading order.
func merge(entries []Origin) []Server {
	var servers []*Server
	byID := map[string]*Server{}
	for _, e := range entries {
		id := identityOf(e)
		if s, ok := byID[id]; ok && id != "" {
			s.Origins = append(s.Origins, e)
			continue
		}
		s := &Server{Origins: []Origin{e}}
		servers = append(servers, s)
		if id != "" {
			byID[id] = s
		}
	}
	taken := map[string]bool{}
	out := make([]Server, 0, len(servers))
	for _, s := range servers {
		first := s.Origins[0]
		name := first.Name
		if taken[name] {
			name = first.Name + "-" + string(first.Client)
			for i := 2; taken[name]; i++ {
				name = fmt.Sprintf("%s-%s-%d", first.Name, first.Client, i)
			}
		}
		taken[name] = true
		s.Name = name
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// identityOf is what makes two definitions one server: the same URL, or
// the same command (a relative path resolved in its project), arguments,
// working folder and variable names. Values are not compared: one file may
// hold a token and another a ${TOKEN} reference to it. "" for a definition
// that is not an object, which is never merged.
func identityOf(o Origin) string {
	spec, ok := o.Spec.(map[string]any)
	if !ok {
		return ""
	}
	if u, ok := spec["url"].(string); ok && u != "" {
		return "url\x00" + strings.TrimRight(u, "/")
	}
	cmd, _ := spec["command"].(string)
	if cmd == "" {
		return ""
	}
	resolve := func(p string) string {
		if p == "" || filepath.IsAbs(p) || strings.HasPrefix(p, "~") || strings.Contains(p, "$") {
			return p
		}
		return filepath.Join(o.Project, p)
	}
	if strings.ContainsRune(cmd, '/') {
		cmd = resolve(cmd)
	}
	var b strings.Builder
	b.WriteString("cmd\x00" + cmd)
	if args, ok := spec["args"].([]any); ok {
		for _, a := range args {
			fmt.Fprintf(&b, "\x00%v", a)
		}
	}
	if cwd, ok := spec["cwd"].(string); ok {
		b.WriteString("\x00cwd=" + resolve(cwd))
	}
	if env, ok := spec["env"].(map[string]any); ok {
		names := make([]string, 0, len(env))
		for k := range env {
			names = append(names, k)
		}
		sort.Strings(names)
		b.WriteString("\x00env=" + strings.Join(names, ","))
	}
	return b.String()
}
