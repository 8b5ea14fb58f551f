package config

// How every source's server becomes a Server. A source (mcpwatch.yml,
// load.go; a client config, imports.go, which a discovered server and a
// registry entry are decoded as too; an mcp-probe config, mcpprobe.go)
// reads its own keys into a Server, and then hands it here: the transport
// it names is read by one rule in one vocabulary (probe.ParseTransport),
// every server gets the same checks (checkServer, checkAuth), and its
// relative paths are resolved alike. A new client file format is a
// dialect and the reading of its keys; a new transport is a word of
// probe.ParseTransport's.

import "github.com/mcpwatch/mcpwatch/probe"

// dialect is how a source writes a server: what it calls the transport
// and the CA file, and what its messages say of a transport that does not
// fit.
type dialect struct {
	transport string // the transport's key: transport, type
	caFile    string // the CA file's key, below the server's
	auto      bool   // the source may write auto (detection)
	// unknown follows the quoted word of a transport not known, or auto
	// where the source has none.
	unknown string
	// onCommand is what a URL transport on a command server says.
	onCommand func(word string) string
}

var (
	ymlDialect = dialect{transport: "transport", caFile: "tls.ca_file", auto: true,
		unknown:   "is not a transport; use auto, http or sse",
		onCommand: func(string) string { return "applies only to url servers, and this one has a command; remove it" }}
	// A client's type names a transport, never detection: Cursor writes
	// no type for a URL whose transport is to be detected.
	clientDialect = dialect{transport: "type", caFile: "ca_file",
		unknown: "is not a server type mcpwatch can probe; use stdio, http or sse",
		onCommand: func(word string) string {
			return "is " + word + " but the server has no url; add one, or use stdio for a command"
		}}
	mcpProbeDialect = dialect{transport: "transport", caFile: "ca_file", auto: true,
		unknown:   "is not a transport mcpwatch can probe a URL with; use http or sse",
		onCommand: ymlDialect.onCommand}
)

// written is what a source read of a server besides its fields: the
// transport and the working directory as written.
type written struct {
	transport    string
	hasTransport bool
	cwd          string
	hasCwd       bool
}

// readShared reads the keys every source names alike: args, env, headers.
func readShared(o *object, s *Server) {
	s.Args, _ = o.strings("args")
	s.Env, _ = o.stringMap("env")
	s.Headers, _ = o.stringMap("headers")
}

// setTransport gives s the transport its source wrote (w), or the one a
// command or a URL takes when it wrote none, and reports a word that does
// not fit at the server prefix's transport key.
func (dl dialect) setTransport(d *decoder, prefix string, s *Server, w written) {
	key := joinKey(prefix, dl.transport)
	t, known := probe.ParseTransport(w.transport)
	switch {
	case !w.hasTransport && s.URL != "":
		s.Transport = probe.TransportAuto
	case !w.hasTransport:
		s.Transport = probe.TransportStdio
	case known && t == probe.TransportStdio:
		s.Transport = t // with a url, checkServer reports it
	case s.URL == "" && s.Command != "":
		s.Transport = probe.TransportStdio
		d.errorf(key, "%s", dl.onCommand(w.transport))
	case !known || t == probe.TransportAuto && !dl.auto:
		s.Transport = probe.TransportAuto
		d.errorf(key, "%q %s", w.transport, dl.unknown)
	default:
		s.Transport = t
	}
}

// finish checks s as every server is checked, and resolves its relative
// paths against dir (a command naming a path, its env file and working
// directory, its CA file).
func (dl dialect) finish(d *decoder, prefix string, s *Server, w written, dir string) {
	checkServer(d, s, serverKeys{prefix: prefix, transport: dl.transport, caFile: joinKey(prefix, dl.caFile)})
	if s.Auth != nil {
		checkAuth(d, s, prefix)
	}
	if s.Command != "" && s.URL == "" {
		s.Command = resolveCommand(s.Command, dir)
		s.EnvFile = resolveServerPath(s.EnvFile, dir)
		s.Dir = dir
		if w.hasCwd {
			s.Dir = resolveServerPath(w.cwd, dir)
		}
	}
	s.CAFile = resolveServerPath(s.CAFile, dir)
}
