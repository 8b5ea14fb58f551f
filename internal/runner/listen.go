package runner

import (
	"context"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/launch"
	"github.com/mcpwatch/mcpwatch/internal/oauth"
	"github.com/mcpwatch/mcpwatch/probe"
)

// ListenRequest is how to listen to a server already probed.
type ListenRequest struct {
	// Transport, Era and ProtocolVersion are what its last successful
	// probe found.
	Transport       probe.Transport
	Era             probe.Era
	ProtocolVersion string
	Options         probe.Options
	Lookup          func(string) (string, bool)
	OAuth           *oauth.Cache
	Up              func() // the stream is open
}

// Listen holds a listening stream to s (see probe.Listen), its target built
// now as a probe's is: references expanded, its OAuth client shared with
// its probes. It returns when ctx ends (nil) or the stream does.
func Listen(ctx context.Context, s config.Server, req ListenRequest, changed func()) error {
	// A listener never signs anyone in.
	b, err := launch.Build(s, req.Lookup, launch.BuildOptions{OAuth: req.OAuth, Listen: true})
	if err != nil {
		return err
	}
	target := b.Target
	if req.Transport != "" {
		target.Transport = req.Transport
	}
	return probe.Listen(ctx, target, probe.ListenOptions{Options: req.Options, Era: req.Era,
		ProtocolVersion: req.ProtocolVersion, Up: req.Up}, changed)
}
