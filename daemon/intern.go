package daemon

import (
	"github.com/mcpwatch/mcpwatch/internal/util/intern"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

// The lists the daemon keeps of each server's tools, interned whole: the
// servers of a fleet list the same tools, and each kept lists of its own
// (4.5 kB a server of 21 tools, a third of a 100,000-server replica's live
// heap) where only the strings in them were shared.
var (
	toolNames   intern.Slices[probe.Tool]         // what a status keeps of a probe's tools (retainedResult)
	toolsHashed intern.Slices[lockstore.Observed] // what a diff is made from (retainedTools)
)

// sharedNames is a list of tool names (retainedResult) as the daemon keeps
// it: one list for every server that lists the same names.
func sharedNames(names []probe.Tool) []probe.Tool {
	var k intern.Key
	for _, t := range names {
		k.String(t.Name)
	}
	return toolNames.Share(names, &k)
}

// sharedObserved is a list of observed tools as the daemon keeps it
// (retainedTools: names, fingerprints and description hashes alone), one
// for every server that keeps the same.
func sharedObserved(obs []lockstore.Observed) []lockstore.Observed {
	var k intern.Key
	for _, o := range obs {
		k.String(o.Name)
		k.String(o.Fingerprint)
		k.String(o.DescriptionHash)
	}
	return toolsHashed.Share(obs, &k)
}

// toolNameLists interns the lists of names a diff holds (expected,
// missing, extra...): the servers that lock the same tools expect the same
// names.
var toolNameLists intern.Slices[string]

// sharedDiff is d with each of its lists shared with the servers whose
// diff has the same list.
func sharedDiff(d lockstore.Diff) lockstore.Diff {
	for _, l := range []*[]string{&d.Expected, &d.Missing, &d.Extra, &d.SchemaChanged, &d.DescriptionChanged, &d.Forbidden, &d.Duplicate} {
		if len(*l) == 0 {
			continue
		}
		var k intern.Key
		for _, name := range *l {
			k.String(name)
		}
		*l = toolNameLists.Share(*l, &k)
	}
	return d
}
