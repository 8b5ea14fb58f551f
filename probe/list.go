package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// tools/list and its pages, and what a probe keeps of the server's own words about
// itself (serverInfo, capabilities) on the way.

// listTools reads every page of tools/list. meta is nil in the legacy era.
// A cursor seen before, or more pages than the cap, fails at once: a server
// whose cursor never advances would otherwise hold the probe to its deadline.
func (s *session) listTools(ctx context.Context, c conn, meta *requestMeta) error {
	var seen map[string]bool // cursors; made at a second page
	names := getNameSet()
	defer putNameSet(names)
	modern := meta != nil
	var cursor *string
	for n := 1; ; n++ {
		start := time.Now()
		p, err := s.callPage(ctx, c, listParams{Meta: meta, Cursor: cursor}, modern, names)
		s.res.Timings.Pages = append(s.res.Timings.Pages, time.Since(start))
		s.obs.operation(ctx, Operation{Method: MethodListTools, Duration: s.res.Timings.Pages[len(s.res.Timings.Pages)-1]}, err)
		if err == nil && modern && s.hinted && n == 1 && isAbsent(p.resultType) {
			// Some legacy servers list their tools without initialize; a
			// modern list carries resultType. Only a hint is questioned so.
			err = failf(ReasonProtocol, "tools/list: the result has no resultType, as a modern server's would")
		}
		if err != nil {
			return onPage(err, n)
		}
		if modern && s.res.TTLMillis == nil && !isAbsent(p.ttl) {
			var ttl float64
			if json.Unmarshal(p.ttl, &ttl) == nil {
				ms := int64(ttl)
				s.res.TTLMillis = &ms
			}
		}
		s.serverInfoFrom(p.meta)
		s.res.Pages = n
		next := p.next
		switch {
		case next == nil && s.relistDue():
			// The server announced a change of its list during this
			// probe: the list just read may be the one before it. Read
			// it once more, in the same session.
			s.res.Tools, s.res.Pages, s.res.Timings.Pages = nil, 0, nil
			s.listBytes = 0
			s.res.Relisted = true
			return s.listTools(ctx, c, meta)
		case next == nil:
			// The list is complete: the result gets a slice of its own, out
			// of the scratch it was appended to (see toolScratch).
			s.res.Tools = append(make([]Tool, 0, len(s.res.Tools)), s.res.Tools...)
			return s.afterList(ctx, c, meta)
		case seen[*next]:
			return failf(ReasonPagination, "tools/list: page %d returned cursor %q again; the server's pagination does not advance", n, sanitize.Truncate(*next, 40))
		case n >= s.opts.MaxPages:
			return failf(ReasonPagination, "tools/list: still more tools after %d pages, the page cap", n)
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[*next] = true
		cursor = next
	}
}

// nameSets keeps the sets of tool names of finished probes: a set grows to
// a server's tools at every probe, where a kept one has room already.
var nameSets sync.Pool

// nameSetMax is the most names a kept set may have held: a set that held a
// list far larger than most is let go rather than kept with its room.
const nameSetMax = 1024

func getNameSet() map[string]bool {
	if m, ok := nameSets.Get().(map[string]bool); ok {
		return m
	}
	return make(map[string]bool)
}

func putNameSet(m map[string]bool) {
	if len(m) > nameSetMax {
		return
	}
	clear(m)
	nameSets.Put(m)
}

// relistDue reports whether tools/list should be read once more: the
// server announced a change of its list (notifications/tools/list_changed)
// during the probe, and the list has not been read again yet.
func (s *session) relistDue() bool {
	if s.res.Relisted {
		return false
	}
	s.obs.mu.Lock()
	defer s.obs.mu.Unlock()
	return s.obs.listChanged > 0
}

// capabilities is what a server declares it does, as far as a probe cares.
type capabilities struct {
	Tools *struct {
		ListChanged bool `json:"listChanged"`
	} `json:"tools"`
}

func (c capabilities) toolsListChanged() bool { return c.Tools != nil && c.Tools.ListChanged }

// onPage names the page of a tools/list failure after the first one.
func onPage(err error, page int) error {
	if page == 1 {
		return err
	}
	var f *Failure
	if errors.As(err, &f) {
		return &Failure{Reason: f.Reason, HTTPStatus: f.HTTPStatus, Challenge: f.Challenge, Err: fmt.Errorf("%w (page %d)", err, page)}
	}
	return &Failure{Reason: ReasonRPCError, Err: fmt.Errorf("%w (page %d)", err, page)}
}

// serverInfoFrom takes serverInfo from a modern result's _meta, once.
func (s *session) serverInfoFrom(meta json.RawMessage) {
	if s.res.ServerName != "" || isAbsent(meta) {
		return
	}
	var m resultMeta
	if json.Unmarshal(meta, &m) == nil && m.ServerInfo != nil {
		s.res.ServerName = sanitize.Truncate(m.ServerInfo.Name, 200)
		s.res.ServerVersion = sanitize.Truncate(m.ServerInfo.Version, 100)
	}
}

func (s *session) setServerInfo(raw json.RawMessage) {
	var info implementation
	if json.Unmarshal(raw, &info) == nil {
		s.res.ServerName = sanitize.Truncate(info.Name, 200)
		s.res.ServerVersion = sanitize.Truncate(info.Version, 100)
	}
}

// isAbsent is true for a missing or null JSON field.
func isAbsent(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}
