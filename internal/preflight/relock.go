package preflight

import (
	"fmt"
	"slices"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/probe"
)

// RelockOptions shape a relock.
type RelockOptions struct {
	// AllowEmpty lets a server that lists no tools be locked as such.
	// Without it an empty list is refused: a missing credential looks
	// exactly like that, and a lock that expects nothing never fails.
	AllowEmpty bool
	// Fingerprints locks each tool's schema fingerprint and description
	// hash. A server whose entry already has them keeps them either way,
	// so a relock never silently weakens the lock.
	Fingerprints bool
	// Prune drops servers that are in the old lock but were not observed
	// (relocking every configured server); without it they are kept byte
	// for byte (relocking chosen servers).
	Prune bool
	// Keep names servers whose old entries stay byte for byte even when
	// pruning: the ones skipped on purpose (--skip, ignore:).
	Keep []string
}

// Refusal is why a server cannot be locked now.
type Refusal struct {
	Server  string   `json:"server"`
	Reason  string   `json:"reason"` // a probe.Reason, "empty" or "secret_in_name"
	Message string   `json:"message"`
	Details []string `json:"details,omitempty"`
}

// RelockPlan is the lock a relock would write, or why it must not.
type RelockPlan struct {
	// Lock is the new lock; nil when Refused is not empty.
	Lock    *lockstore.Lock
	Changes []lockstore.Change
	Refused []Refusal
}

// Relock builds the new lock from the old one (nil when there is none) and
// what was observed. It refuses, naming each server and why, when any
// probe failed, a server listed no tools without opts.AllowEmpty (a failed
// observation is never promoted into an expectation), or a tool's name held
// a secret value (the lock is committed). The old lock is
// not changed.
func Relock(old *lockstore.Lock, observations []Observation, opts RelockOptions) (RelockPlan, error) {
	var plan RelockPlan
	for _, obs := range observations {
		res := obs.Result
		switch {
		case !res.OK:
			r := Refusal{Server: obs.Server.Name, Reason: string(res.Reason),
				Message: describeFailure(res)}
			for _, line := range sanitize.LastLines(res.StderrTail, stderrLines) {
				r.Details = append(r.Details, "| "+line)
			}
			plan.Refused = append(plan.Refused, r)
		case issuerRejected(res):
			c, _ := verdict.Issuer(res, probe.IssuerRejected)
			plan.Refused = append(plan.Refused, Refusal{Server: obs.Server.Name, Reason: string(probe.ReasonCredentialRejected),
				Message: fmt.Sprintf("credential %s rejected by its issuer: %s; a server given a dead credential may list fewer tools than it offers: renew it, then lock",
					c.Credential, sanitize.OneLine(verdict.IssuerQuote(c)))})
		case len(obs.SecretNames) > 0:
			plan.Refused = append(plan.Refused, Refusal{Server: obs.Server.Name, Reason: "secret_in_name",
				Message: fmt.Sprintf("%s a configured secret value (%s); a lock is committed, so it must never hold one: fix the server, or give it another credential",
					count(len(obs.SecretNames), "tool name holds", "tool names hold"), toolList(obs.SecretNames))})
		case len(obs.Tools) == 0 && !opts.AllowEmpty:
			plan.Refused = append(plan.Refused, Refusal{Server: obs.Server.Name, Reason: "empty",
				Message: "lists no tools (a missing or expired credential looks like this); fix it, or pass --allow-empty if the server really offers none"})
		}
	}
	if len(plan.Refused) > 0 {
		return plan, nil
	}

	next := lockstore.New()
	if old != nil {
		// A copy through the bytes keeps every untouched server's bytes.
		var err error
		if next, err = lockstore.Parse(old.Marshal()); err != nil {
			return plan, fmt.Errorf("copy the old lock: %w", err)
		}
	}
	seen := map[string]bool{}
	for _, obs := range observations {
		seen[obs.Server.Name] = true
		prev, _ := old.Entry(obs.Server.Name)
		next.Set(obs.Server.Name, lockstore.NewEntry(obs.Tools, opts.Fingerprints || hasFingerprints(prev)))
	}
	if opts.Prune {
		for _, name := range old.Servers() {
			if !seen[name] && !slices.Contains(opts.Keep, name) {
				next.Remove(name)
			}
		}
	}
	plan.Lock = next
	plan.Changes = lockstore.Changes(old, next)
	return plan, nil
}

// issuerRejected: a credential of the probe was rejected by its issuer.
func issuerRejected(res *probe.Result) bool {
	_, ok := verdict.Issuer(res, probe.IssuerRejected)
	return ok
}

func hasFingerprints(e lockstore.Entry) bool {
	for _, t := range e.Tools {
		if t.Schema != "" || t.Description != "" {
			return true
		}
	}
	return false
}
