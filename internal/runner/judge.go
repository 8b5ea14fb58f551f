package runner

import (
	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/contracts"
	"github.com/mcpwatch/mcpwatch/internal/launch"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

// judging is what judge reads a probe that ran with.
type judging struct {
	// built is the server as it was probed: its credentials, contracts
	// and install.
	built launch.Built
	// scrub holds every secret the probe knew of by its end.
	scrub Scrubber
	// warm: the server's command had started before, so a timeout is not
	// explained by an install (Request.Warm).
	warm bool
	// fingerprint, when set, fills the fingerprints of the observed tools
	// within the probe's deadline, and returns the reason of a probe that
	// ended while it did (timeout, canceled); probe.ReasonNone when it did
	// not.
	fingerprint func([]lockstore.Observed) probe.Reason
}

// judge is the one step between what a probe saw (said, and the outcomes
// of its calls) and what mcpwatch shows and keeps: everything is scrubbed
// of the server's secrets, the evidence is gathered (the tools, their
// fingerprints), and the result is read once (classify).
func judge(said *probe.Result, outcomes []contracts.Outcome, j judging) Observation {
	obs := Observation{Timeout: j.built.Timeout}
	scrubbed := j.scrub.Result(said)
	// What the server said of its credential or its service comes first:
	// a probe it judges failed has no tools to fingerprint.
	read := rejected(scrubbed, credentialNames(j.built.Given))
	ended := probe.ReasonNone
	if read.OK {
		obs.Tools = make([]lockstore.Observed, len(read.Tools))
		for i, t := range read.Tools {
			obs.Tools[i] = lockstore.Observed{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
		}
		obs.SecretNames = secretNames(said.Tools, read.Tools)
		if j.fingerprint != nil {
			ended = j.fingerprint(obs.Tools)
		}
	}
	var install *config.Install
	if !j.warm {
		install = &j.built.Install
	}
	obs.Result = classify(read, install, ended)
	if !obs.Result.OK {
		obs.Tools, obs.SecretNames = nil, nil
	}
	b := j.built
	switch {
	case b.Calls && (!said.OK || outcomes == nil):
		obs.Calls = j.scrub.outcomes(notCalled(b, said))
	case b.Calls || b.Auto > 0:
		obs.Calls = j.scrub.outcomes(outcomes)
	}
	return obs
}

// classify reads a scrubbed probe that what its server said of its
// credential or its service did not fail (rejected, which judge asks
// first), and returns it judged: a copy when the judgement changes it, res
// itself when not. The readings exclude one another; the first that
// applies is the judgement:
//
//   - a probe that listed the tools but ended while they were
//     fingerprinted (ended: timeout or canceled);
//   - the timeout of a command's first start, which may have been an
//     install (Installing; install is nil when the start was not a first
//     one).
func classify(res *probe.Result, install *config.Install, ended probe.Reason) *probe.Result {
	if res.OK && ended != probe.ReasonNone {
		return endedEarly(res, ended)
	}
	if install != nil {
		return Installing(res, *install)
	}
	return res
}
