package daemon

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/mcpwatch/mcpwatch/probe"
)

//go:embed templates/*.html
var templateFiles embed.FS

// pages are the status page and the server page. html/template escapes
// every value by its context: tool names, error messages, stderr tails and
// server names are all chosen by someone else and treated as hostile.
type pages struct {
	index, server *template.Template
}

func parsePages() (*pages, error) {
	funcs := template.FuncMap{"upper": strings.ToUpper}
	parse := func(name string) (*template.Template, error) {
		return template.New(name).Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/"+name)
	}
	index, err := parse("index.html")
	if err != nil {
		return nil, fmt.Errorf("status page template: %w", err)
	}
	srv, err := parse("server.html")
	if err != nil {
		return nil, fmt.Errorf("server page template: %w", err)
	}
	return &pages{index: index, server: srv}, nil
}

// row is one server as the pages show it.
type row struct {
	Name      string
	Href      string // this server's page, relative to the root of the routes (as APIHref and ProbeHref)
	APIHref   string
	ProbeHref string // a debug probe now
	State     State
	Transport probe.Transport
	Schedule  string
	Era       probe.Era
	Version   string
	Probed    bool // a probe has finished
	OK        bool // the last probe succeeded
	Tools     int
	Expected  int
	Locked    bool
	Missing   []string
	Extra     []string
	Forbidden []string
	Duplicate []string
	Changed   []string
	Age       string
	At        string
	Latency   string
	Reason    probe.Reason
	Error     string
	Stderr    string
	Probes    uint64
	Failures  []reasonCount
	Skipped   uint64
	ToolNames []string
	Warnings  []string
	// Credential is the credential that expires first; nil when none has
	// a known expiry.
	Credential *credentialCell
}

type reasonCount struct {
	Reason probe.Reason
	Count  uint64
}

func newRow(dt details, now time.Time) row {
	st := dt.Status
	r := row{
		Name:      st.Name,
		Href:      "server/" + url.PathEscape(st.Name),
		APIHref:   "api/v1/servers/" + url.PathEscape(st.Name),
		ProbeHref: "probe?" + url.Values{"server": {st.Name}, "debug": {"true"}}.Encode(),
		State:     stateOf(st.Last, st.Diff),
		Transport: st.Transport,
		Schedule:  st.Schedule,
		Expected:  len(st.Diff.Expected),
		Locked:    st.Diff.Locked,
		Probes:    st.Probes,
		Skipped:   dt.Skipped,
	}
	for _, reason := range probe.Reasons {
		if n := st.Failures[reason]; n > 0 {
			r.Failures = append(r.Failures, reasonCount{reason, n})
		}
	}
	if ok := st.LastOK; ok != nil {
		r.Era, r.Version = ok.Era, ok.ProtocolVersion
	}
	last := st.Last
	if last == nil {
		return r
	}
	end := last.Started.Add(last.Timings.Total)
	r.Probed, r.OK = true, last.OK
	r.Credential = newCredentialCell(last.Credentials, now)
	r.Age = age(now.Sub(end))
	r.At = end.UTC().Format(time.RFC3339)
	r.Latency = last.Timings.Total.Round(time.Millisecond).String()
	r.Stderr = last.StderrTail
	r.Warnings = last.Warnings
	if !last.OK {
		r.Reason, r.Error = last.Reason, last.Error
		return r
	}
	r.Era, r.Version = last.Era, last.ProtocolVersion
	r.Tools = len(last.Tools)
	r.ToolNames = last.ToolNames()
	r.Missing, r.Extra, r.Forbidden, r.Duplicate = st.Diff.Missing, st.Diff.Extra, st.Diff.Forbidden, st.Diff.Duplicate
	r.Changed = append(append([]string(nil), st.Diff.SchemaChanged...), st.Diff.DescriptionChanged...)
	return r
}

// age is a duration for people: "4s", "3m12s", "2h5m".
func age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Hour:
		return d.Round(time.Second).String()
	}
	return d.Round(time.Minute).String()
}

type indexView struct {
	Root    string // the way back to the root of the routes, for relative links: "" here
	Title   string
	Version string
	Now     string
	Ready   bool
	Config  string
	Lock    string
	Rows    []row
	Counts  []stateCount
	Refresh int
	// Where this daemon sits among its replicas: its shard ("1 of 3",
	// empty when unsharded), its replica name, and the other replicas'
	// status pages (--web.peer-urls, which may include its own).
	Shard   string
	Replica string
	Peers   []string
}

type stateCount struct {
	State State
	Count int
}

type serverView struct {
	Root    string // "../"
	Refresh int    // none: a person reads this page at length
	Title   string
	Version string
	Now     string
	Row     row
	History []historyRow
}

type historyRow struct {
	Record
	At      string
	Latency string
}

func (d *Daemon) handleIndex(w http.ResponseWriter, _ *http.Request) {
	now := time.Now()
	cfg := d.Config()
	view := indexView{
		Title:   "mcpwatch",
		Version: d.version(),
		Now:     now.UTC().Format(time.RFC3339),
		Ready:   d.Ready(),
		Config:  d.configPath(),
		Lock:    cfg.Lock,
		Refresh: 10,
		Replica: d.opts.Replica,
		Peers:   d.opts.PeerURLs,
	}
	if d.opts.Shard.Total > 1 {
		view.Shard = d.opts.Shard.String()
	}
	counts := map[State]int{}
	for _, name := range d.serverNames() {
		s, ok := d.lookup(name)
		if !ok {
			continue
		}
		r := newRow(s.details(), now)
		counts[r.State]++
		view.Rows = append(view.Rows, r)
	}
	for _, st := range []State{StateFailed, StateMissing, StateForbidden, StatePending, StateOK} {
		if counts[st] > 0 {
			view.Counts = append(view.Counts, stateCount{st, counts[st]})
		}
	}
	d.render(w, http.StatusOK, d.pages.index, view)
}

func (d *Daemon) handleServerPage(w http.ResponseWriter, r *http.Request) {
	s, ok := d.lookup(r.PathValue("name"))
	if !ok {
		writeText(w, http.StatusNotFound, "no server of that name in the running configuration\n")
		return
	}
	now := time.Now()
	dt := s.details()
	view := serverView{
		Root:    "../",
		Title:   "mcpwatch: " + dt.Status.Name,
		Version: d.version(),
		Now:     now.UTC().Format(time.RFC3339),
		Row:     newRow(dt, now),
	}
	for _, rec := range dt.History {
		view.History = append(view.History, historyRow{
			Record:  rec,
			At:      rec.Started.Add(rec.Duration).UTC().Format(time.RFC3339),
			Latency: rec.Duration.Round(time.Millisecond).String(),
		})
	}
	d.render(w, http.StatusOK, d.pages.server, view)
}

// version is mcpwatch's version as the pages show it; a plain go build has
// none.
func (d *Daemon) version() string {
	if d.opts.Version == "" {
		return "(development build)"
	}
	return d.opts.Version
}

// render executes into a buffer first, so a template error is a clean 500
// rather than half a page.
func (d *Daemon) render(w http.ResponseWriter, status int, t *template.Template, view any) {
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", view); err != nil {
		d.log.Error("render page", zap.String("template", t.Name()), zap.Error(err))
		writeText(w, http.StatusInternalServerError, "page could not be rendered; see the log\n")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
