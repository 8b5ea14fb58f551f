package lockstore

// Diff is an observed tool surface compared with its lock entry. Every list
// is sorted by name.
type Diff struct {
	Locked             bool     `json:"locked"`                        // the lock has an entry for this server
	Expected           []string `json:"expected"`                      // locked tool names
	Missing            []string `json:"missing,omitempty"`             // locked, not seen: fails
	Extra              []string `json:"extra,omitempty"`               // seen, not locked: passes, reported
	SchemaChanged      []string `json:"schema_changed,omitempty"`      // locked fingerprint differs: fails with --strict
	DescriptionChanged []string `json:"description_changed,omitempty"` // locked description hash differs: fails with --strict
	Forbidden          []string `json:"forbidden,omitempty"`           // seen, and matches a forbid pattern: fails
	// Duplicate are names the server listed more than once: only the first
	// definition is compared with the lock, so a second one (another
	// schema, another description) would pass unseen. Reported; fails with
	// --strict.
	Duplicate []string `json:"duplicate,omitempty"`
}
