package daemon

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/mcpwatch/mcpwatch/internal/config"
	"github.com/mcpwatch/mcpwatch/internal/status"
	"github.com/mcpwatch/mcpwatch/internal/util/jsondoc"
	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
	"github.com/mcpwatch/mcpwatch/internal/verdict"
	"github.com/mcpwatch/mcpwatch/lockstore"
	"github.com/mcpwatch/mcpwatch/metrics"
	"github.com/mcpwatch/mcpwatch/probe"
)

// apiServer is one server in /api/v1/servers. It carries what a probe
// observed and how it compared with the lock; never the target's
// environment, headers or arguments, which may hold credentials.
//
// state is the verdict; ok is state == "ok", so the two never disagree;
// probe_success is whether the last probe itself succeeded (as
// mcpwatch_probe_success): a server whose probe succeeded with locked tools
// missing is probe_success true, ok false, state "missing". Every duration
// is seconds, a float, in a field named *_seconds; times are RFC 3339.
type apiServer struct {
	Name            string                  `json:"name"`
	State           verdict.State           `json:"state"`
	Transport       probe.Transport         `json:"transport"`
	Schedule        string                  `json:"schedule"`
	IntervalSeconds float64                 `json:"interval_seconds,omitempty"`
	OK              bool                    `json:"ok"`
	ProbeSuccess    *bool                   `json:"probe_success,omitempty"` // absent until the first probe
	Reason          probe.Reason            `json:"reason,omitempty"`
	Error           string                  `json:"error,omitempty"`
	HTTPStatus      int                     `json:"http_status,omitempty"`
	RPCCode         int                     `json:"rpc_code,omitempty"`
	Challenge       *probe.Challenge        `json:"challenge,omitempty"`
	Era             probe.Era               `json:"era,omitempty"`
	ProtocolVersion string                  `json:"protocol_version,omitempty"`
	ServerName      string                  `json:"server_name,omitempty"`
	ServerVersion   string                  `json:"server_version,omitempty"`
	Tools           []string                `json:"tools"`
	ToolsSeen       int                     `json:"tools_seen"`
	ToolsExpected   int                     `json:"tools_expected"`
	Diff            lockstore.Diff          `json:"diff"`
	LastProbe       *time.Time              `json:"last_probe,omitempty"`
	LastSuccess     *time.Time              `json:"last_success,omitempty"`
	DurationSeconds float64                 `json:"duration_seconds"`
	Timings         *apiTimings             `json:"timings,omitempty"`
	StderrTail      string                  `json:"stderr_tail,omitempty"`
	Warnings        []string                `json:"warnings,omitempty"`
	Credentials     *probe.CredentialStatus `json:"credentials,omitempty"` // given (present or not), expiries, OAuth refreshes, a rejection; no value
	// Credential names the credential of a credential_missing or
	// credential_rejected server ("env:GITHUB_TOKEN"), as judged.
	Credential string `json:"credential,omitempty"`
	// Quote is the server's words that showed a credential_rejected or
	// upstream_unreachable state, as judged (scrubbed, cut to 200 bytes).
	Quote    string                  `json:"quote,omitempty"`
	Probes   uint64                  `json:"probes"`
	Failures map[probe.Reason]uint64 `json:"failures,omitempty"`
	Skipped  uint64                  `json:"skipped"`
	History  []Record                `json:"history,omitempty"`
	Calls    []apiCall               `json:"calls,omitempty"`
	// CallsBackoff says the server's calls are held for a rate limit or a
	// quota an answer showed, until when; absent when they are not.
	CallsBackoff *apiBackoff `json:"calls_backed_off,omitempty"`
	// Stdio is how a stdio server is run: its stdio_mode, whether it runs
	// between probes now, and when and why it last started.
	Stdio *apiStdio `json:"stdio,omitempty"`
}

// apiStdio is status.Stdio in the API.
type apiStdio struct {
	Mode        string            `json:"mode"`                   // live: it runs between probes now; fresh: a process per probe
	Configured  string            `json:"configured"`             // its stdio_mode
	Started     *time.Time        `json:"started,omitempty"`      // when its process last started
	StartReason probe.StartReason `json:"start_reason,omitempty"` // why a live one last started
	Starts      uint64            `json:"starts"`
}

func newAPIStdio(st *status.Stdio) *apiStdio {
	if st == nil {
		return nil
	}
	a := &apiStdio{Mode: config.StdioFresh, Configured: st.Configured, StartReason: st.Start, Starts: st.Starts}
	if st.Live {
		a.Mode = config.StdioLive
	}
	if !st.Started.IsZero() {
		t := st.Started
		a.Started = &t
	}
	return a
}

type apiTimings struct {
	Connect   float64 `json:"connect_seconds"`
	Handshake float64 `json:"handshake_seconds"`
	List      float64 `json:"list_seconds"`
	Total     float64 `json:"total_seconds"`
}

func newAPIServer(dt details) apiServer {
	st := dt.Status
	a := apiServer{
		Name:            st.Name,
		State:           st.Judgement.State,
		Calls:           newAPICalls(st),
		CallsBackoff:    newAPIBackoff(st.CallsBackoff),
		Transport:       st.Transport,
		Schedule:        st.Schedule,
		IntervalSeconds: st.Interval.Seconds(),
		Tools:           []string{},
		ToolsExpected:   len(st.Diff.Expected),
		Diff:            st.Diff,
		Probes:          st.Probes,
		Failures:        st.Failures,
		Skipped:         dt.Skipped,
		Stdio:           newAPIStdio(st.Stdio),
	}
	a.OK = a.State == verdict.StateOK
	a.Credential = st.Judgement.Credential
	a.Quote = st.Judgement.Quote
	if !st.LastSuccess.IsZero() {
		t := st.LastSuccess
		a.LastSuccess = &t
	}
	if ok := st.LastOK; ok != nil {
		a.Era, a.ProtocolVersion, a.ServerName, a.ServerVersion = ok.Era, ok.ProtocolVersion, ok.ServerName, ok.ServerVersion
	}
	last := st.Last
	if last == nil {
		return a
	}
	a.ProbeSuccess = &last.OK
	a.Reason, a.Error, a.HTTPStatus, a.RPCCode, a.Challenge = last.Reason, last.Error, last.HTTPStatus, last.RPCCode, last.Challenge
	if last.Era != "" {
		a.Era, a.ProtocolVersion, a.ServerName, a.ServerVersion = last.Era, last.ProtocolVersion, last.ServerName, last.ServerVersion
	}
	a.Tools = last.ToolNames()
	a.ToolsSeen = len(last.Tools)
	end := last.Started.Add(last.Timings.Total)
	a.LastProbe = &end
	a.DurationSeconds = last.Timings.Total.Seconds()
	a.Timings = &apiTimings{
		Connect:   last.Timings.Connect.Seconds(),
		Handshake: last.Timings.Handshake.Seconds(),
		List:      sumDurations(last.Timings.Pages).Seconds(),
		Total:     last.Timings.Total.Seconds(),
	}
	a.StderrTail, a.Warnings = last.StderrTail, last.Warnings
	a.Credentials = last.Credentials
	return a
}

func sumDurations(ds []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum
}

// apiPage is the part of the server list /api/v1/servers is asked for:
// ?limit=N, at most N servers; ?after=NAME, those whose names sort after
// NAME (the "next" of the previous page). Names are the cursor, not
// offsets: a reload that adds or removes servers between two pages
// neither repeats nor skips the others.
type apiPage struct {
	after string
	limit int // 0: every server from after on
}

// maxAPIPage bounds ?limit= so that one page answers well within a
// scrape timeout at any fleet size: 10,000 servers are about 18 MB and a
// second or two on a loaded machine (a page of 1,000 of 100,000: 0.15 s).
const maxAPIPage = 10000

func readAPIPage(r *http.Request) (apiPage, error) {
	v := r.URL.Query()
	p := apiPage{after: v.Get("after")}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > maxAPIPage {
			return p, fmt.Errorf("limit=%q: want a number of servers from 1 to %d; follow \"next\" with after= for the rest", l, maxAPIPage)
		}
		p.limit = n
	}
	return p, nil
}

// of cuts the sorted names to the page: those after p.after, at most
// p.limit of them, and whether more follow.
func (p apiPage) of(names []string) (page []string, more bool) {
	from := 0
	if p.after != "" {
		var found bool
		from, found = slices.BinarySearch(names, p.after)
		if found {
			from++
		}
	}
	page = names[from:]
	if p.limit > 0 && len(page) > p.limit {
		return page[:p.limit], true
	}
	return page, false
}

func (d *Daemon) handleAPIServers(w http.ResponseWriter, r *http.Request) {
	p, err := readAPIPage(r)
	if err != nil {
		d.writeJSON(w, r, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	names, more := p.of(d.serverNames())
	var members []jsondoc.Member
	if more {
		members = append(members, jsondoc.Member{Name: "next", Value: names[len(names)-1]})
	}
	// Encoded one server at a time: at 10,000 servers the document is tens
	// of megabytes, which the daemon should hold once, not as values and
	// then as copies of the whole.
	body, err := jsondoc.MarshalList("servers", func(yield func(any) bool) {
		for _, name := range names {
			s, ok := d.lookup(name)
			if !ok {
				continue // removed since the names were read
			}
			if !yield(newAPIServer(s.details(false))) {
				return
			}
		}
	}, members...)
	d.writeBody(w, r, http.StatusOK, body, err)
}

func (d *Daemon) handleAPIServer(w http.ResponseWriter, r *http.Request) {
	s, ok := d.lookup(r.PathValue("name"))
	if !ok {
		d.writeJSON(w, r, http.StatusNotFound, map[string]string{"error": "no server of that name in the running configuration"})
		return
	}
	dt := s.details(true)
	a := newAPIServer(dt)
	a.History = dt.History
	d.writeJSON(w, r, http.StatusOK, a)
}

// writeJSON answers v as a JSON document (see jsondoc) with code: every
// JSON answer of the daemon goes through it. The document is encoded whole
// before anything is written, so a value that cannot be encoded (a time
// past year 9999, a NaN) is a 500 and a log line naming the path, never a
// 200 with an empty or cut body.
func (d *Daemon) writeJSON(w http.ResponseWriter, r *http.Request, code int, v any) {
	body, err := jsondoc.Marshal(v)
	d.writeBody(w, r, code, body, err)
}

// writeBody answers with an encoded JSON document, or the error of its
// encoding as writeJSON does.
func (d *Daemon) writeBody(w http.ResponseWriter, r *http.Request, code int, body []byte, err error) {
	if err != nil {
		d.log.Error("cannot encode the JSON answer", zap.String("path", r.URL.Path), zap.Error(err))
		writeText(w, http.StatusInternalServerError, "the answer could not be encoded as JSON; the daemon's log says why.\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// handleProbe probes one server now, through the same path and pool as the
// schedule, and answers with that server's metrics after the probe, as a
// blackbox exporter's /probe does; requests for a server share one probe
// (see flight.go). The server is named by server= or, as blackbox_exporter
// users write it, target=. The scrape's timeout (Prometheus's
// X-Prometheus-Scrape-Timeout-Seconds) less Options.ProbeTimeoutOffset
// bounds the probe when it is shorter than the server's own timeout
// (probeTimeout). debug=true answers with a text report instead: the
// result, the transcript of every message, and the metrics.
func (d *Daemon) handleProbe(w http.ResponseWriter, r *http.Request) {
	name, err := probeTarget(r)
	if err != nil {
		writeText(w, http.StatusBadRequest, err.Error()+"\n")
		return
	}
	s, ok := d.lookup(name)
	if !ok {
		writeText(w, http.StatusNotFound, "no server of that name in the running configuration; see /api/v1/servers\n")
		return
	}
	d.mu.RLock()
	serverTimeout := s.probeTimeout(d.opts.Timeout)
	d.mu.RUnlock()
	timeout, err := probeTimeout(r, serverTimeout, d.opts.ProbeTimeoutOffset)
	if err != nil {
		writeText(w, http.StatusBadRequest, err.Error()+"\n")
		return
	}
	debug := r.URL.Query().Get("debug") == "true"
	f, err := d.probeRequest(r.Context(), s, time.Now().Add(timeout))
	switch {
	case errors.Is(err, errTooManyWaiters), errors.Is(err, errOnDemandFull):
		w.Header().Set("Retry-After", d.retryAfter(s))
		writeText(w, http.StatusTooManyRequests, fmt.Sprintf("probe of %q not started: %v; try again when it ends.\n", name, err))
		return
	case err != nil:
		writeText(w, http.StatusServiceUnavailable, fmt.Sprintf("probe of %q not done: %v\n", name, err))
		return
	}
	if !debug {
		metrics.ServeServer(w, r, f.st)
		return
	}
	var b strings.Builder
	writeDebugReport(&b, name, f.res, f.st, f.trigger == triggerRequest)
	b.WriteString("\nMetrics that would be returned:\n\n")
	_ = metrics.WriteServerText(&b, f.st) // a strings.Builder does not fail
	writeText(w, http.StatusOK, b.String())
}

// probeTarget is the server a /probe request names: server=NAME, or
// target=NAME as blackbox_exporter's /probe is asked (one of them, or both
// the same).
func probeTarget(r *http.Request) (string, error) {
	q := r.URL.Query()
	server, target := q.Get("server"), q.Get("target")
	switch {
	case server == "" && target == "":
		return "", errors.New("missing the server parameter: /probe?server=NAME (or target=NAME, as for blackbox_exporter)")
	case server != "" && target != "" && server != target:
		return "", fmt.Errorf("server=%q and target=%q name two servers; give one", sanitize.Text(server), sanitize.Text(target))
	case server != "":
		return server, nil
	}
	return target, nil
}

// writeDebugReport writes a probe for a person: the outcome, the diff, the
// stderr tail, the warnings and every message sent and received (header
// values are never in a transcript). It is plain text a person may read in
// a terminal: what the server sent goes through sanitize.Text.
// withTranscript is false for a request that waited for a scheduled probe,
// which records none.
func writeDebugReport(b *strings.Builder, name string, res *probe.Result, st status.Server, withTranscript bool) {
	fmt.Fprintf(b, "Probe of server %q\n\n", name)
	fmt.Fprintf(b, "state:            %s\n", st.Judgement.State)
	fmt.Fprintf(b, "ok:               %t\n", res.OK)
	if !res.OK {
		fmt.Fprintf(b, "reason:           %s\n", res.Reason)
		fmt.Fprintf(b, "error:            %s\n", sanitize.Text(res.Error))
	}
	fmt.Fprintf(b, "transport:        %s\n", res.Transport)
	fmt.Fprintf(b, "era:              %s\n", res.Era)
	fmt.Fprintf(b, "protocol version: %s\n", sanitize.Text(res.ProtocolVersion))
	fmt.Fprintf(b, "server:           %s %s\n", sanitize.Text(res.ServerName), sanitize.Text(res.ServerVersion))
	fmt.Fprintf(b, "duration:         %s (connect %s, handshake %s, list %s in %d pages)\n",
		res.Timings.Total, res.Timings.Connect, res.Timings.Handshake, sumDurations(res.Timings.Pages), res.Pages)
	fmt.Fprintf(b, "tools:            %d %s\n", len(res.Tools), debugNames(res.ToolNames()))
	if st.Diff.Locked {
		fmt.Fprintf(b, "expected:         %d %s\n", len(st.Diff.Expected), debugNames(st.Diff.Expected))
		fmt.Fprintf(b, "missing:          %s\n", debugNames(st.Diff.Missing))
		fmt.Fprintf(b, "extra:            %s\n", debugNames(st.Diff.Extra))
	} else {
		b.WriteString("expected:         (the lock has no entry for this server)\n")
	}
	if len(st.Diff.Forbidden) > 0 {
		fmt.Fprintf(b, "forbidden:        %s\n", debugNames(st.Diff.Forbidden))
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(b, "warning:          %s\n", sanitize.Text(w))
	}
	if res.StderrTail != "" {
		fmt.Fprintf(b, "\nstderr (tail):\n%s\n", sanitize.Join(sanitize.LastLines(res.StderrTail, 0), "\n"))
	}
	b.WriteString("\nTranscript:\n")
	if !withTranscript {
		b.WriteString("  (not recorded: this request waited for the scheduled probe that was already running)\n")
	} else if len(res.Transcript) == 0 {
		b.WriteString("  (no messages)\n")
	}
	for _, e := range res.Transcript {
		fmt.Fprintf(b, "%10s %-4s", e.At.Round(time.Microsecond), e.Direction)
		if len(e.Message) > 0 {
			fmt.Fprintf(b, " %s", sanitize.Text(string(e.Message)))
		}
		if e.Note != "" {
			fmt.Fprintf(b, " (%s)", sanitize.Text(e.Note))
		}
		b.WriteString("\n")
	}
}

// debugNames lists names in the /probe text as it always did ("[a b]"),
// every one of them, each escaped and cut (sanitize.Name).
func debugNames(names []string) string {
	return "[" + sanitize.Text(sanitize.JoinNames(names, " ", 0)) + "]"
}
