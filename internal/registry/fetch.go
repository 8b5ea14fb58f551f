package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/readfile"
)

const (
	pageSize = 100 // Mirror.PageSize's default
	// maxPages bounds a listing against a registry whose cursors never
	// end: 1,000 pages of 100 is ten times the official registry today.
	maxPages = 1000
	// MaxEntries bounds the servers one registry (or file) may hold: a
	// registry of more is refused whole, with an error, before its entries
	// cost memory (a decoded entry costs several times its bytes). Ten
	// times what the official registry lists today.
	MaxEntries = 20_000
	// MaxBytes bounds what one sync reads of a registry, every page
	// together, and a file of entries: 64 MiB is about 200,000 entries of
	// the official registry's size.
	MaxBytes = 64 << 20
	// maxPageBytes bounds one page's body.
	maxPageBytes = 8 << 20
)

// errTooLarge words a registry past its bounds, with the next step.
func errTooLarge(where, what string, maxEntries, maxBytes int) error {
	return fmt.Errorf("%s: %s; stopped (mcpwatch reads at most %d entries and %d MiB of a registry): import a registry or a file of the servers to watch", where, what, maxEntries, maxBytes>>20)
}

// Mirror is a registry's entries as last read, kept between reloads so a
// reload asks only for what changed (updated_since).
type Mirror struct {
	endpoint string // the list endpoint: .../v0.1/servers
	client   *http.Client
	// PageSize is the limit asked of each page; the registry may give
	// fewer (the official one gives at most 100). Default 100.
	PageSize int

	// maxEntries and maxBytes are MaxEntries and MaxBytes (tests lower them).
	maxEntries, maxBytes int

	mu      sync.Mutex
	entries map[string]Entry // by server name: the latest version of each
	since   time.Time        // the newest update seen; zero before the first sync
	synced  bool
}

// NewMirror mirrors the registry whose API is at apiURL: the registry's
// base URL (https://registry.modelcontextprotocol.io), its versioned API
// (.../v0.1), or the list endpoint itself (.../v0.1/servers). A base URL
// gets the API version v0.1, which the official registry keeps stable.
func NewMirror(apiURL string, client *http.Client) (*Mirror, error) {
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("is not an http:// or https:// URL of a registry API (such as https://registry.modelcontextprotocol.io)")
	}
	u.RawQuery, u.Fragment = "", ""
	path := strings.TrimRight(u.Path, "/")
	switch last := path[strings.LastIndex(path, "/")+1:]; {
	case last == "servers":
	case strings.HasPrefix(last, "v0"):
		path += "/servers"
	default:
		path += "/v0.1/servers"
	}
	u.Path = path
	if client == nil {
		client = defaultClient()
	}
	return &Mirror{endpoint: u.String(), client: client, PageSize: pageSize, entries: map[string]Entry{},
		maxEntries: MaxEntries, maxBytes: MaxBytes}, nil
}

// defaultClient is the HTTP client a registry is read with when the caller
// gives none: a minute for each page.
func defaultClient() *http.Client { return &http.Client{Timeout: time.Minute} }

// Endpoint is the list endpoint the mirror reads.
func (m *Mirror) Endpoint() string { return m.endpoint }

// SyncStats says what a sync read and changed.
type SyncStats struct {
	Incremental bool // only entries updated since the last sync were asked for
	Pages       int
	Read        int // entries read
	Added       int
	Updated     int
	Removed     int // deleted in the registry
}

// Sync reads the registry: every entry the first time, then only those
// updated since the newest update seen (a deleted entry then comes with
// status deleted, and is dropped). On an error nothing changes.
func (m *Mirror) Sync(ctx context.Context) (SyncStats, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := SyncStats{Incremental: m.synced}
	var since string
	if m.synced && !m.since.IsZero() {
		since = m.since.UTC().Format(time.RFC3339Nano)
	}
	read, pages, err := m.list(ctx, since)
	st.Pages, st.Read = pages, len(read)
	if err != nil {
		return st, err
	}
	// A first sync replaces everything; a later one changes a copy.
	next := map[string]Entry{}
	if m.synced {
		for k, v := range m.entries {
			next[k] = v
		}
	}
	newest := m.since
	for _, e := range latest(read) {
		if e.Updated.After(newest) {
			newest = e.Updated
		}
		_, had := next[e.Name]
		if e.Status == "deleted" {
			if had {
				delete(next, e.Name)
				st.Removed++
			}
			continue
		}
		next[e.Name] = e
		if had {
			st.Updated++
		} else {
			st.Added++
		}
	}
	if len(next) > m.maxEntries {
		return st, errTooLarge(m.endpoint, fmt.Sprintf("more than %d servers", m.maxEntries), m.maxEntries, m.maxBytes)
	}
	m.entries, m.since, m.synced = next, newest, true
	return st, nil
}

// Entries are the mirrored entries, sorted by name.
func (m *Mirror) Entries() []Entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Entry, 0, len(m.entries))
	for _, e := range m.entries {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// list reads every page of the listing.
func (m *Mirror) list(ctx context.Context, since string) ([]Entry, int, error) {
	var out []Entry
	cursor := ""
	seen := map[string]bool{}
	total := 0 // bytes read, every page together
	for page := 1; ; page++ {
		if page > maxPages {
			return nil, page - 1, fmt.Errorf("%s: more than %d pages; stopped", m.endpoint, maxPages)
		}
		q := url.Values{}
		q.Set("limit", strconv.Itoa(m.PageSize))
		q.Set("version", "latest")
		if since != "" {
			q.Set("updated_since", since)
		}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		body, err := m.page(ctx, q, m.maxBytes-total)
		if err != nil {
			return nil, page, err
		}
		total += len(body)
		var resp struct {
			Servers  []rawEntry `json:"servers"`
			Metadata struct {
				NextCursor      string `json:"nextCursor"`
				NextCursorSnake string `json:"next_cursor"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(body, &resp); err != nil {
			return nil, page, fmt.Errorf("%s: page %d is not a server list (%s)", m.endpoint, page, jsonProblem(err))
		}
		if len(out)+len(resp.Servers) > m.maxEntries {
			return nil, page, errTooLarge(m.endpoint, fmt.Sprintf("more than %d entries by page %d", m.maxEntries, page), m.maxEntries, m.maxBytes)
		}
		for _, r := range resp.Servers {
			out = append(out, r.entry())
		}
		cursor = or(resp.Metadata.NextCursor, resp.Metadata.NextCursorSnake)
		if cursor == "" {
			return out, page, nil
		}
		if seen[cursor] {
			return nil, page, fmt.Errorf("%s: page %d gives a cursor already followed; the registry's pagination loops", m.endpoint, page)
		}
		seen[cursor] = true
	}
}

// page reads one page of at most maxPageBytes, and at most left bytes (what
// the sync may still read).
func (m *Mirror) page(ctx context.Context, q url.Values, left int) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.endpoint+"?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := m.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.endpoint, errors.Unwrap(err))
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		return nil, fmt.Errorf("%s answered HTTP %d; is it the URL of a registry API?", m.endpoint, resp.StatusCode)
	}
	limit := min(maxPageBytes, left)
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.endpoint, err)
	}
	switch {
	case len(body) > limit && limit < maxPageBytes:
		return nil, errTooLarge(m.endpoint, fmt.Sprintf("more than %d MiB", m.maxBytes>>20), m.maxEntries, m.maxBytes)
	case len(body) > limit:
		return nil, fmt.Errorf("%s: a page larger than %d MiB; stopped", m.endpoint, maxPageBytes>>20)
	}
	return body, nil
}

// ReadFile reads a file of server.json entries: one server.json, a list of
// them (or of API list items), or a saved API answer ({"servers": [...]}).
// Deleted entries are left out; of several versions of a server, the
// latest is kept.
func ReadFile(path string) ([]Entry, error) {
	data, err := readfile.Read(path, MaxBytes)
	if err != nil {
		return nil, err
	}
	var raws []rawEntry
	trimmed := strings.TrimSpace(string(data))
	switch {
	case strings.HasPrefix(trimmed, "["):
		err = json.Unmarshal(data, &raws)
	case strings.HasPrefix(trimmed, "{"):
		var probe struct {
			Servers []rawEntry `json:"servers"`
		}
		if err = json.Unmarshal(data, &probe); err == nil && probe.Servers != nil {
			raws = probe.Servers
			break
		}
		var one rawEntry
		err = json.Unmarshal(data, &one)
		raws = []rawEntry{one}
	default:
		return nil, errors.New("is not JSON: it should hold a server.json, a list of them, or a registry's {\"servers\": [...]} answer")
	}
	if err != nil {
		return nil, fmt.Errorf("is not a server.json, a list of them or a registry answer (%s)", jsonProblem(err))
	}
	if len(raws) > MaxEntries {
		return nil, errTooLarge("the file", fmt.Sprintf("%d entries", len(raws)), MaxEntries, MaxBytes)
	}
	var out []Entry
	for i, r := range raws {
		e := r.entry()
		if e.Name == "" {
			return nil, fmt.Errorf("entry %d has no name; every server.json has one", i)
		}
		if e.Status != "deleted" {
			out = append(out, e)
		}
	}
	return latest(out), nil
}

// latest keeps one entry per name, in order of first appearance: the one
// the registry marks latest, else the most recently updated, else the
// last listed.
func latest(entries []Entry) []Entry {
	index := map[string]int{}
	var out []Entry
	for _, e := range entries {
		i, ok := index[e.Name]
		if !ok {
			index[e.Name] = len(out)
			out = append(out, e)
			continue
		}
		cur := out[i]
		if e.IsLatest && !cur.IsLatest || e.IsLatest == cur.IsLatest && !e.Updated.Before(cur.Updated) {
			out[i] = e
		}
	}
	return out
}

// jsonProblem says what is wrong with a JSON document without quoting it.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("invalid JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("%s should be a JSON %s, not %s", typ.Field, typ.Type.Kind(), typ.Value)
	}
	return "invalid JSON"
}
