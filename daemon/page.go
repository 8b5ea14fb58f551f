package daemon

import (
	"bytes"
	"cmp"
	"embed"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/issuer"
	"github.com/mcpwatch/mcpwatch/internal/status"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
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
	// name cuts a name a server chose (sanitize.Name) and shows what
	// would act on the page escaped, as every text output does
	// (sanitize.Text: a line break in a name as "\n"); the template
	// escapes it for HTML.
	funcs := template.FuncMap{"upper": strings.ToUpper, "severity": severityOf, "name": func(s string) string { return sanitize.Text(sanitize.Name(s)) }}
	parse := func(name string) (*template.Template, error) {
		return template.New(name).Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/calls.html", "templates/"+name)
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
	State     verdict.State
	Transport probe.Transport
	Schedule  string
	// Version is the protocol version the server speaks, which the pages
	// show; Era, the protocol generation, is a detail (EraNote says it in
	// words), not a verdict.
	Era       probe.Era
	EraNote   string
	Version   string
	Probed    bool // a probe has finished
	OK        bool // the last probe succeeded
	Tools     int
	Expected  int
	Locked    bool
	Missing   []string
	Extra     []string
	Forbidden []string
	// On the status page: how many names were cut from Missing and
	// Forbidden, and the count of Extra (whose names only the server page
	// lists).
	MissingMore   int
	ForbiddenMore int
	ExtraCount    int
	StderrLast    string // the last line of Stderr, cut, for the status page
	Severity      string
	Duplicate     []string
	Changed       []string
	Age           string
	At            string
	Latency       string
	Reason        probe.Reason
	Error         string
	Stderr        string
	Probes        uint64
	Failures      []reasonCount
	Skipped       uint64
	ToolNames     []string
	Warnings      []string
	// Issuer are the checks of its credentials at their issuers, for
	// people: where, and what the service said.
	Issuer []string
	// Credential is the credential that expires first; nil when none has
	// a known expiry.
	Credential *credentialCell
	// CredentialProblem says which credential is missing or was rejected,
	// and why, for a server in a credential state.
	CredentialProblem string
	// UpstreamProblem says, for a server that could not reach the service
	// it fronts, that the service is unreachable, in the server's words.
	UpstreamProblem string
	// Calls are the server's canary calls.
	Calls callsView
	// Trend draws the server's kept probes: states, durations, tools.
	Trend trendView
	// Stdio says how a stdio server is run (live or fresh) and when it
	// last started, and StdioMode in a word (live, fresh) for the status
	// page; both empty for a remote one.
	Stdio, StdioMode string
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
		State:     st.Judgement.State,
		Calls:     newCallsView(st, dt.CallSchedule),
		Transport: st.Transport,
		Schedule:  st.Schedule,
		Expected:  len(st.Diff.Expected),
		Locked:    st.Diff.Locked,
		Probes:    st.Probes,
		Skipped:   dt.Skipped,
	}
	r.Severity = severityOf(r.State)
	r.Stdio = stdioLine(st.Stdio, now)
	if st.Stdio != nil {
		r.StdioMode = config.StdioFresh
		if st.Stdio.Live {
			r.StdioMode = config.StdioLive
		}
	}
	r.CredentialProblem = credentialProblem(st)
	r.UpstreamProblem = upstreamProblem(st)
	for _, reason := range probe.Reasons {
		if n := st.Failures[reason]; n > 0 {
			r.Failures = append(r.Failures, reasonCount{reason, n})
		}
	}
	if ok := st.LastOK; ok != nil {
		r.Era, r.Version, r.EraNote = ok.Era, ok.ProtocolVersion, eraNote(ok.Era)
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
	if last.Reason == probe.ReasonCredentialMissing {
		// not probed: there is no latency to show, and 0s would read as a fast probe
		r.Latency = "-"
	}
	r.Stderr = last.StderrTail
	r.Warnings = last.Warnings
	if last.Credentials != nil {
		for _, c := range last.Credentials.Issuer {
			r.Issuer = append(r.Issuer, sanitize.Text(issuer.Describe(c)))
		}
	}
	if !last.OK {
		r.Reason, r.Error = last.Reason, last.Error
		return r
	}
	r.Era, r.Version, r.EraNote = last.Era, last.ProtocolVersion, eraNote(last.Era)
	r.Tools = len(last.Tools)
	r.ToolNames = last.ToolNames()
	r.Missing, r.Extra, r.Forbidden, r.Duplicate = st.Diff.Missing, st.Diff.Extra, st.Diff.Forbidden, st.Diff.Duplicate
	r.Changed = append(append([]string(nil), st.Diff.SchemaChanged...), st.Diff.DescriptionChanged...)
	return r
}

// eraNote says what a protocol era means, for the pages' tooltip and the
// server page: the era is how mcpwatch spoke to the server, no fault.
func eraNote(era probe.Era) string {
	switch era {
	case probe.EraLegacy:
		return "spoken with the initialize handshake (protocol versions 2024-11-05 to 2025-11-25)"
	case probe.EraModern:
		return "spoken statelessly (protocol versions 2026-07-28 and later)"
	case "":
		return ""
	}
	return string(era) + " era"
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

// The status page at fleet scale: problems first, counts per state that
// filter, a text filter, and pages of rows. Filtering, sorting and paging
// happen here, in links and a GET form, so the page needs no script and
// its Content-Security-Policy stays strict.
const (
	defaultPerPage = 200
	maxPerPage     = 10000
	// maxIndexNames and maxIndexError keep one row of the status page to a
	// few lines, whatever a server lists or says; the server page shows it
	// all.
	maxIndexNames = 5
	maxIndexError = 240
)

type indexView struct {
	Root     string // the way back to the root of the routes, for relative links: "" here
	Title    string
	Version  string
	Now      string
	Ready    bool
	Config   string
	Lock     string
	Refresh  int
	Banners  []banner
	Total    int // servers configured
	Problems int // servers in a problem state
	Counts   []stateCount
	AllHref  string
	Filtered bool   // a state or text filter is on
	Query    string // the text filter
	State    string // the state filter
	PerPage  int
	Matching int // servers the filters let through
	Rows     []row
	From, To int // 1-based positions of the rows shown among the matching
	Page     int
	Pages    int
	PrevHref string
	NextHref string
	Pager    []pageLink
	// Where this daemon sits among its replicas: its shard ("1 of 3",
	// empty when unsharded), its replica name, and the other replicas'
	// status pages (--web.peer-urls, which may include its own).
	Shard   string
	Replica string
	Peers   []string
}

// banner is a problem of mcpwatch itself, shown above the servers.
type banner struct {
	Title string
	Text  string
	Since string
}

// stateCount is one state's count, a link that filters on it.
type stateCount struct {
	State    verdict.State
	Severity string
	Count    int
	Href     string
	Active   bool
}

type pageLink struct {
	N       int
	Href    string
	Current bool
	Gap     bool // "…" between far-apart links
}

// severityOf is the colour a state is shown in: its verdict level, the
// severity of the alert it raises.
func severityOf(st verdict.State) string { return string(st.Level()) }

// indexQuery is what the status page's URL asks for.
type indexQuery struct {
	state   string
	q       string
	page    int
	perPage int
}

func readIndexQuery(r *http.Request) indexQuery {
	v := r.URL.Query()
	q := indexQuery{state: v.Get("state"), q: strings.TrimSpace(v.Get("q")), page: 1, perPage: defaultPerPage}
	if n, err := strconv.Atoi(v.Get("page")); err == nil && n > 0 {
		q.page = n
	}
	if n, err := strconv.Atoi(v.Get("per_page")); err == nil && n > 0 {
		q.perPage = min(n, maxPerPage)
	}
	return q
}

// href is the status page's link with these filters and page; empty
// values and defaults are left out, so links stay short.
func (q indexQuery) href() string {
	v := url.Values{}
	if q.state != "" {
		v.Set("state", q.state)
	}
	if q.q != "" {
		v.Set("q", q.q)
	}
	if q.page > 1 {
		v.Set("page", strconv.Itoa(q.page))
	}
	if q.perPage != defaultPerPage {
		v.Set("per_page", strconv.Itoa(q.perPage))
	}
	if len(v) == 0 {
		return "./"
	}
	return "?" + v.Encode()
}

// entry is one server as the status page sorts and filters it, before a
// row is built for the servers on the page shown: a pointer into the
// statuses read for the page, so ten thousand servers are not copied
// twice.
type entry struct {
	status *status.Server
}

func (e entry) state() verdict.State { return e.status.Judgement.State }

// matches is the text filter: a case-insensitive substring of the name,
// the transport, the failure reason or error, or a missing tool's name.
func (e entry) matches(lowerQ string) bool {
	if lowerQ == "" {
		return true
	}
	st := e.status
	if strings.Contains(strings.ToLower(st.Name), lowerQ) || strings.Contains(string(st.Transport), lowerQ) ||
		strings.Contains(string(e.state()), lowerQ) {
		return true
	}
	if last := st.Last; last != nil && !last.OK &&
		(strings.Contains(string(last.Reason), lowerQ) || strings.Contains(strings.ToLower(last.Error), lowerQ)) {
		return true
	}
	for _, m := range st.Diff.Missing {
		if strings.Contains(strings.ToLower(m), lowerQ) {
			return true
		}
	}
	return false
}

func (d *Daemon) handleIndex(w http.ResponseWriter, r *http.Request) {
	q := readIndexQuery(r)
	view := d.indexView(q, time.Now())
	d.render(w, http.StatusOK, d.pages.index, view)
}

// indexView builds the status page for q: every server judged, counted
// and filtered, and rows built only for the page shown.
func (d *Daemon) indexView(q indexQuery, now time.Time) indexView {
	cfg := d.Config()
	view := indexView{
		Title:   "mcpwatch",
		Version: d.version(),
		Now:     now.UTC().Format(time.RFC3339),
		Ready:   d.Ready(),
		Config:  d.configPath(),
		Lock:    cfg.Lock,
		Refresh: 10,
		Banners: d.banners(now),
		Query:   q.q,
		State:   q.state,
		PerPage: q.perPage,
		Replica: d.opts.Replica,
		Peers:   d.opts.PeerURLs,
	}
	if d.opts.Shard.Total > 1 {
		view.Shard = d.opts.Shard.String()
	}
	statuses := d.Statuses()
	view.Total = len(statuses)
	counts := map[verdict.State]int{}
	lowerQ := strings.ToLower(q.q)
	entries := make([]entry, 0, len(statuses))
	for i := range statuses {
		e := entry{status: &statuses[i]}
		if e.state().Problem() {
			view.Problems++ // of the whole fleet, whatever the filters
		}
		if !e.matches(lowerQ) {
			continue
		}
		counts[e.state()]++
		if q.state == "" || string(e.state()) == q.state {
			entries = append(entries, e)
		}
	}
	// The counts are of the servers the text filter lets through, so a
	// state link shows what it would list.
	var states []verdict.State
	for st := range counts {
		states = append(states, st)
	}
	slices.SortFunc(states, func(a, b verdict.State) int { return cmp.Or(a.Rank()-b.Rank(), strings.Compare(string(a), string(b))) })
	for _, st := range states {
		link := q
		link.state, link.page = string(st), 1
		if q.state == string(st) {
			link.state = "" // the active filter's link turns it off
		}
		view.Counts = append(view.Counts, stateCount{State: st, Severity: severityOf(st), Count: counts[st], Href: link.href(), Active: q.state == string(st)})
	}
	all := q
	all.state, all.q, all.page = "", "", 1
	view.AllHref = all.href()
	view.Filtered = q.state != "" || q.q != ""
	if q.q != "" {
		view.Refresh = 0 // a person is searching: do not reload under them
	}

	slices.SortFunc(entries, func(a, b entry) int {
		return cmp.Or(a.state().Rank()-b.state().Rank(), strings.Compare(a.status.Name, b.status.Name))
	})
	view.Matching = len(entries)
	view.Pages = max(1, (len(entries)+q.perPage-1)/q.perPage)
	view.Page = min(q.page, view.Pages)
	from := (view.Page - 1) * q.perPage
	to := min(from+q.perPage, len(entries))
	view.From, view.To = from+1, to
	view.Rows = make([]row, 0, to-from)
	var points []trendPoint // reused from row to row
	for i := from; i < to; i++ {
		r := newIndexRow(*entries[i].status, now)
		if srv, ok := d.lookup(r.Name); ok {
			r.Trend, points = srv.trend(points)
		}
		view.Rows = append(view.Rows, r)
	}
	if view.Pages > 1 {
		at := func(n int) string { l := q; l.page = n; return l.href() }
		if view.Page > 1 {
			view.PrevHref = at(view.Page - 1)
		}
		if view.Page < view.Pages {
			view.NextHref = at(view.Page + 1)
		}
		last := 0
		for n := 1; n <= view.Pages; n++ {
			if n != 1 && n != view.Pages && (n < view.Page-2 || n > view.Page+2) {
				continue
			}
			if last != 0 && n > last+1 {
				view.Pager = append(view.Pager, pageLink{Gap: true})
			}
			view.Pager = append(view.Pager, pageLink{N: n, Href: at(n), Current: n == view.Page})
			last = n
		}
	}

	switch {
	case view.Problems == 1:
		view.Title = "1 problem · mcpwatch"
	case view.Problems > 1:
		view.Title = fmt.Sprintf("%d problems · mcpwatch", view.Problems)
	case view.Total > 0:
		view.Title = "no problems · mcpwatch"
	}
	return view
}

// newIndexRow is a row of the status page: newRow, with the lists and the
// error cut to what fits a line.
func newIndexRow(st status.Server, now time.Time) row {
	r := newRow(details{Status: st}, now)
	r.Missing, r.MissingMore = cutNames(r.Missing)
	r.Forbidden, r.ForbiddenMore = cutNames(r.Forbidden)
	r.ExtraCount, r.Extra = len(r.Extra), nil
	r.ToolNames, r.Changed, r.Warnings = nil, nil, nil
	r.Error = sanitize.Truncate(r.Error, maxIndexError)
	if !r.OK {
		r.StderrLast = sanitize.Truncate(sanitize.LastLine(r.Stderr), maxIndexError/2)
	}
	r.Stderr = ""
	return r
}

func cutNames(names []string) ([]string, int) {
	if len(names) <= maxIndexNames {
		return names, 0
	}
	return names[:maxIndexNames], len(names) - maxIndexNames
}

// banners are the problems of mcpwatch itself: a configuration that did not
// reload, a lock file that cannot be read.
func (d *Daemon) banners(now time.Time) []banner {
	var out []banner
	if msg, since := d.reloadFailure(); msg != "" {
		out = append(out, banner{
			Title: "The configuration did not reload; the previous one keeps running.",
			Text:  msg,
			Since: age(now.Sub(since)) + " ago",
		})
	}
	if lh := d.lock.status(); lh.Err != "" {
		out = append(out, banner{
			Title: "The lock file " + lh.Path + " cannot be read; servers are compared with the last good lock, or none.",
			Text:  lh.Err,
			Since: age(now.Sub(lh.Since)) + " ago",
		})
	}
	return out
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

func (d *Daemon) handleServerPage(w http.ResponseWriter, r *http.Request) {
	s, ok := d.lookup(r.PathValue("name"))
	if !ok {
		writeText(w, http.StatusNotFound, "no server of that name in the running configuration\n")
		return
	}
	now := time.Now()
	dt := s.details(true)
	view := serverView{
		Root:    "../",
		Title:   "mcpwatch: " + dt.Status.Name,
		Version: d.version(),
		Now:     now.UTC().Format(time.RFC3339),
		Row:     newRow(dt, now),
	}
	view.Row.Trend, _ = s.trend(nil)
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
	// No script at all: filters, pages and refresh are links, a GET form
	// and a meta refresh.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	w.WriteHeader(status)
	// html/template escapes what a server sent for HTML, not for the eye:
	// a bidirectional override or a C1 control in a tool name, an error
	// or a stderr line would reorder or hide what the page shows. The
	// templates hold none, so every one left came from a server, and is
	// escaped visibly, as the terminal outputs show it ("\u202e").
	_, _ = io.WriteString(w, sanitize.Layout(buf.String()))
}

// stdioLine says how a stdio server is run and when it last started.
func stdioLine(st *status.Stdio, now time.Time) string {
	if st == nil {
		return ""
	}
	var b strings.Builder
	switch {
	case st.Live:
		b.WriteString("live: runs between probes, a probe is tools/list on it")
	case st.Configured == config.StdioLive && st.Starts > 0:
		b.WriteString("live, not running now (its last probe ended it, or live_sessions are all taken): the next probe starts it")
	case st.Configured == config.StdioLive:
		b.WriteString("live")
	default:
		b.WriteString("fresh: started for each probe")
	}
	if !st.Started.IsZero() {
		fmt.Fprintf(&b, "; last started %s (%s ago)", st.Started.UTC().Format(time.RFC3339), age(now.Sub(st.Started)))
		if st.Start != "" {
			fmt.Fprintf(&b, ", %s", startWords(st.Start))
		}
		fmt.Fprintf(&b, "; %d starts", st.Starts)
	}
	return b.String()
}

// startWords says why a live server was started.
func startWords(r probe.StartReason) string {
	switch r {
	case probe.StartFirst:
		return "its first start"
	case probe.StartExited:
		return "it had ended between probes"
	case probe.StartFailed:
		return "the probe before failed"
	case probe.StartChanged:
		return "what it is started with changed"
	case probe.StartRenewed:
		return "restart_every"
	}
	return string(r)
}
