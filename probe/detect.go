package probe

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// Era detection: server/discover under its own sub-deadline, and how its answer
// (or its refusal) decides between the stateless era and the initialize-based one.

// discoverBudget is the sub-deadline of server/discover: the configured
// timeout, but never more than half of what remains, so a legacy server that
// ignores unknown methods leaves time for initialize.
func (s *session) discoverBudget(ctx context.Context) time.Duration {
	budget := s.opts.DiscoverTimeout
	if deadline, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(deadline)/2)
	}
	return budget
}

// detect asks server/discover under its own short deadline and reads the
// era from the answer (see CLIENT.md, Era detection). Authorization, connection
// and TLS failures are not era signals: they end the probe. A version list
// (a discover result's, or -32022's data) decides by eraOf.
func (s *session) detect(ctx context.Context, c conn) (Era, string, error) {
	sub, cancel := context.WithTimeout(ctx, s.discoverBudget(ctx))
	defer cancel()
	start := time.Now()
	raw, err := c.call(sub, MethodDiscover, discoverParams{Meta: s.meta(VersionModern)})
	took := time.Since(start)
	s.res.Timings.Handshake += took
	s.obs.operation(sub, Operation{Method: MethodDiscover, Duration: took}, err)
	if ctx.Err() != nil {
		return "", "", ctxFailure(ctx, "server/discover", s.obs.start)
	}
	if err == nil {
		return s.discovered(raw)
	}
	s.discoverSilent = sub.Err() != nil
	var rpcErr *RPCError
	var f *Failure
	switch {
	case errors.As(err, &f) && isFinal(f.Reason), endedUnprompted(err):
		return "", "", err
	case !errors.As(err, &rpcErr):
		return EraLegacy, "", nil // silence, exit, garbage: a legacy server
	case rpcErr.Code == codeUnsupportedVersion:
		var data struct {
			Supported []string `json:"supported"`
		}
		_ = json.Unmarshal(rpcErr.Data, &data)
		return eraOf(data.Supported)
	case rpcErr.Code == codeMissingCapability, rpcErr.Code == codeHeaderMismatch,
		rpcErr.Code == codeMethodNotFound && rpcErr.HTTPStatus == 404:
		return EraModern, VersionModern, nil
	}
	return EraLegacy, "", nil
}

// isFinal says whether a failure of server/discover ends the probe instead
// of meaning "legacy".
func isFinal(r Reason) bool {
	switch r {
	case ReasonUnauthorized, ReasonForbidden, ReasonConnection, ReasonTLS,
		ReasonSpawnFailed, ReasonCanceled, ReasonConfig:
		return true
	}
	return false
}

// discovered reads a server/discover result: one with supportedVersions is
// a modern server.
func (s *session) discovered(raw json.RawMessage) (Era, string, error) {
	var r struct {
		SupportedVersions json.RawMessage `json:"supportedVersions"`
		Meta              json.RawMessage `json:"_meta"`
		Capabilities      capabilities    `json:"capabilities"`
	}
	if json.Unmarshal(raw, &r) != nil || isAbsent(r.SupportedVersions) {
		return EraLegacy, "", nil //nolint:nilerr // a reply that is no discover result is what a legacy server sends: an answer, not a failure
	}
	s.res.AnnouncesChanges = r.Capabilities.toolsListChanged()
	var versions []string
	if err := json.Unmarshal(r.SupportedVersions, &versions); err != nil {
		return "", "", failf(ReasonProtocol, "server/discover: supportedVersions is not a list of strings")
	}
	s.serverInfoFrom(r.Meta)
	return eraOf(versions)
}

// eraOf picks the era from the versions a server says it supports: a modern
// one we speak, else legacy when it names an initialize-era version we speak
// (go-sdk v1.8.0 configured for the legacy era answers server/discover with
// -32022 naming only those: initialize is the only way to use them).
func eraOf(supported []string) (Era, string, error) {
	if version, ok := pickVersion(supported, modernVersions); ok {
		return EraModern, version, nil
	}
	if _, ok := pickVersion(supported, LegacyVersions); ok {
		return EraLegacy, "", nil
	}
	return "", "", failf(ReasonProtocol, "server/discover: the server supports protocol versions %s, none of which mcpwatch speaks (%s, %s)",
		listVersions(supported), strings.Join(modernVersions, ", "), strings.Join(LegacyVersions, ", "))
}

// pickVersion is the first of ours that the server lists.
func pickVersion(theirs, ours []string) (string, bool) {
	for _, v := range ours {
		if slices.Contains(theirs, v) {
			return v, true
		}
	}
	return "", false
}

func listVersions(vs []string) string {
	if len(vs) == 0 {
		return "(none listed)"
	}
	vs = slices.Clone(vs)
	if len(vs) > 8 {
		vs = append(vs[:8], "…")
	}
	for i, v := range vs {
		vs[i] = sanitize.Truncate(v, 20)
	}
	return "[" + strings.Join(vs, ", ") + "]"
}
