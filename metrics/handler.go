package metrics

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzhttp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mcpwatch/mcpwatch/internal/status"
)

// Logger receives the errors of a scrape; *log.Logger is one.
type Logger interface {
	Println(v ...any)
}

// acceptedFormats are the exposition formats /metrics and /probe offer, in
// the order expfmt negotiates them against a client's Accept header:
// OpenMetrics 1.0 and 0.0.1 and the text format 0.0.4, which TextWriter
// writes straight from the statuses, and delimited protobuf, which goes
// through expfmt's encoder. The text format is the default.
var acceptedFormats = []expfmt.Format{
	expfmt.FmtOpenMetrics_1_0_0,
	expfmt.FmtOpenMetrics_0_0_1,
	expfmt.FmtText,
	expfmt.FmtProtoDelim,
}

// compress wraps a handler with gzip for clients that accept it
// (Prometheus always does), at gzip.BestSpeed: the text compresses about 20
// times at the lowest CPU cost. Every format is compressed.
var compress = func() func(http.Handler) http.HandlerFunc {
	wrap, err := gzhttp.NewWrapper(
		gzhttp.CompressionLevel(gzip.BestSpeed),
		gzhttp.MinSize(0),
		gzhttp.EnableZstd(false),
		gzhttp.ContentTypeFilter(func(string) bool { return true }),
	)
	if err != nil {
		panic(err) // fixed, valid options: every test sees it
	}
	return wrap
}()

// Handler serves /metrics: the statuses of a status.Source written by a
// TextWriter, then the families of mcpwatch's own registry (build, reload,
// scheduling, Go and process), in the format expfmt negotiates with the
// client (acceptedFormats), gzipped when the client accepts it.
type Handler struct {
	src      status.Source
	own      prometheus.Gatherer
	log      Logger
	rendered map[string]bool // family names the TextWriter owns
	serve    http.Handler    // ServeHTTP, compressed

	writers sync.Pool // *TextWriter
}

var _ http.Handler = (*Handler)(nil)

// HandlerOption changes what a Handler renders.
type HandlerOption func(*handlerOptions)

type handlerOptions struct{ perServerOperations bool }

// PerServerOperations renders mcp_client_operation_duration_seconds per
// server, method, tool, outcome, protocol version and transport from the
// statuses, instead of the fleet's histogram of own (the daemon then must
// not call Daemon.ObserveOperations). It costs about 3 kB of text a kind of request
// and server.
func PerServerOperations() HandlerOption {
	return func(o *handlerOptions) { o.perServerOperations = true }
}

// NewHandler returns the /metrics handler over src and own (the registry of
// NewRegistry). Errors of a scrape go to log, which may be nil.
func NewHandler(src status.Source, own prometheus.Gatherer, log Logger, opts ...HandlerOption) *Handler {
	var o handlerOptions
	for _, opt := range opts {
		opt(&o)
	}
	h := &Handler{src: src, own: own, log: log, rendered: map[string]bool{}}
	for _, f := range newDescs().all {
		h.rendered[f.name] = true
	}
	if !o.perServerOperations {
		delete(h.rendered, OperationDurationName) // own's fleet histogram is served
	}
	h.writers.New = func() any {
		tw := NewTextWriter()
		tw.fleetOperations = !o.perServerOperations
		return tw
	}
	h.serve = compress(http.HandlerFunc(h.serveUncompressed))
	return h
}

// ServeHTTP writes the scrape. An error of the own registry is logged and
// the families it did gather are still served, as promhttp's
// ContinueOnError does: a broken process collector must not hide the
// servers' metrics.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.serve.ServeHTTP(w, r) }

func (h *Handler) serveUncompressed(w http.ResponseWriter, r *http.Request) {
	statuses := h.src.Statuses()
	tw := h.writers.Get().(*TextWriter)
	defer h.writers.Put(tw)
	err := respond(w, r, tw, func(tw *TextWriter, out io.Writer, om bool) error {
		return tw.writeStatuses(out, statuses, om)
	}, h.own, h.rendered, h.logf)
	if err != nil {
		h.logf("write the /metrics response: %v", err)
	}
}

// respond negotiates the format, and writes the per-server families with
// write and then the families of own (nil: none) to w. Text and OpenMetrics
// are written straight by tw; protobuf is the text parsed back into metric
// families and encoded by expfmt.
func respond(w http.ResponseWriter, r *http.Request, tw *TextWriter, write func(*TextWriter, io.Writer, bool) error,
	own prometheus.Gatherer, rendered map[string]bool, logf func(string, ...any)) error {
	format := expfmt.NegotiateAccept(r.Header, acceptedFormats...)
	w.Header().Set("Content-Type", string(format))
	w.Header().Add("Vary", "Accept") // and gzhttp adds Accept-Encoding
	var ownFamilies []*dto.MetricFamily
	if own != nil {
		mfs, err := own.Gather()
		if err != nil {
			logf("gather mcpwatch's own metrics (the rest is served): %v", err)
		}
		for _, mf := range mfs {
			if rendered[mf.GetName()] {
				logf("metric family %s is both a server metric and one of mcpwatch's own; the second is left out", mf.GetName())
				continue
			}
			ownFamilies = append(ownFamilies, mf)
		}
	}

	switch format.FormatType() {
	case expfmt.TypeTextPlain, expfmt.TypeOpenMetrics:
		om := format.FormatType() == expfmt.TypeOpenMetrics
		if err := write(tw, w, om); err != nil {
			return err
		}
		for _, mf := range ownFamilies {
			var err error
			if om {
				_, err = expfmt.MetricFamilyToOpenMetrics(w, mf)
			} else {
				_, err = expfmt.MetricFamilyToText(w, mf)
			}
			if err != nil {
				return err
			}
		}
		if om {
			_, err := expfmt.FinalizeOpenMetrics(w)
			return err
		}
		return nil
	}

	// Protobuf: the text the writer renders, read back by expfmt's parser
	// (one renderer of the per-server families), then every family sorted
	// by name, as a registry gathers them.
	var text bytes.Buffer
	if err := write(tw, &text, false); err != nil {
		return err
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	parsed, err := parser.TextToMetricFamilies(&text)
	if err != nil {
		return fmt.Errorf("read back the rendered text: %w", err)
	}
	all := ownFamilies
	for _, mf := range parsed {
		all = append(all, mf)
	}
	slices.SortFunc(all, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	enc := expfmt.NewEncoder(w, format)
	for _, mf := range all {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	if c, ok := enc.(expfmt.Closer); ok {
		return c.Close()
	}
	return nil
}

func (h *Handler) logf(format string, args ...any) {
	if h.log != nil {
		h.log.Println(fmt.Sprintf(format, args...))
	}
}

// ServeServer answers the blackbox-style /probe?server=NAME with st's
// metrics: the same series /metrics has for that server, written by the same
// TextWriter, and nothing else, in the format the client negotiates. A
// write error means the client is gone, and is not reported.
func ServeServer(w http.ResponseWriter, r *http.Request, st status.Server) {
	compress(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = respond(w, r, NewTextWriter(), func(tw *TextWriter, out io.Writer, om bool) error {
			return tw.writeServer(out, st, om)
		}, nil, nil, func(string, ...any) {})
	})).ServeHTTP(w, r)
}
