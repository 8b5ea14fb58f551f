package metrics

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// Logger receives the errors of a scrape; *log.Logger is one.
type Logger interface {
	Println(v ...any)
}

// Handler serves /metrics: the statuses of a Source written by a
// TextWriter, then the families of mcpwatch's own registry (build, reload,
// scheduling, Go and process), always in the text format, gzipped when the
// client accepts it (Prometheus always does).
type Handler struct {
	src      Source
	own      prometheus.Gatherer
	log      Logger
	rendered map[string]bool // family names the TextWriter owns

	writers sync.Pool // *TextWriter
	gzips   gzipPool
}

var _ http.Handler = (*Handler)(nil)

// NewHandler returns the /metrics handler over src and own (the registry of
// NewRegistry). Errors of a scrape go to log, which may be nil.
func NewHandler(src Source, own prometheus.Gatherer, log Logger) *Handler {
	h := &Handler{src: src, own: own, log: log, rendered: map[string]bool{}}
	for _, f := range newDescs().all {
		h.rendered[f.name] = true
	}
	h.writers.New = func() any { return NewTextWriter() }
	return h
}

// ServeHTTP writes the scrape. An error of the own registry is logged and
// the families it did gather are still served, as promhttp's
// ContinueOnError does: a broken process collector must not hide the
// servers' metrics.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	statuses := h.src.Statuses()
	body, finish := h.gzips.respond(w, r)
	tw := h.writers.Get().(*TextWriter)
	err := tw.WriteStatuses(body, statuses)
	h.writers.Put(tw)
	if err == nil {
		err = h.writeOwn(body)
	}
	if err = finishWith(err, finish); err != nil {
		h.logf("write the /metrics response: %v", err)
	}
}

// writeOwn writes the families of the own registry. A family of the same name
// as one the TextWriter wrote would make the whole scrape unreadable: it is
// left out and logged (a test keeps the two sets apart).
func (h *Handler) writeOwn(w io.Writer) error {
	mfs, err := h.own.Gather()
	if err != nil {
		h.logf("gather mcpwatch's own metrics (the rest is served): %v", err)
	}
	for _, mf := range mfs {
		if h.rendered[mf.GetName()] {
			h.logf("metric family %s is both a server metric and one of mcpwatch's own; the second is left out", mf.GetName())
			continue
		}
		if _, err := expfmt.MetricFamilyToText(w, mf); err != nil {
			return err
		}
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
// TextWriter, and nothing else. A write error means the client is gone, and
// is not reported.
func ServeServer(w http.ResponseWriter, r *http.Request, st ServerStatus) {
	var gzips gzipPool
	body, finish := gzips.respond(w, r)
	_ = finishWith(WriteServerText(body, st), finish)
}

func finishWith(err error, finish func() error) error {
	if ferr := finish(); err == nil {
		err = ferr
	}
	return err
}

// gzipPool holds gzip writers for reuse: a fresh one allocates its
// compressor's tables, which would be most of a scrape's garbage.
type gzipPool struct {
	pool sync.Pool
}

// respond writes the headers and returns where the body goes, compressed at
// gzip.BestSpeed if r accepts gzip (the text compresses about 20 times at
// the lowest CPU cost), and the func that ends the body.
func (p *gzipPool) respond(w http.ResponseWriter, r *http.Request) (io.Writer, func() error) {
	header := w.Header()
	header.Set("Content-Type", ContentType)
	header.Add("Vary", "Accept-Encoding")
	if !acceptsGzip(r.Header.Values("Accept-Encoding")) {
		return w, func() error { return nil }
	}
	header.Set("Content-Encoding", "gzip")
	zw, _ := p.pool.Get().(*gzip.Writer)
	if zw == nil {
		// BestSpeed is a valid level: NewWriterLevel cannot fail.
		zw, _ = gzip.NewWriterLevel(w, gzip.BestSpeed)
	} else {
		zw.Reset(w)
	}
	return zw, func() error {
		err := zw.Close()
		zw.Reset(io.Discard) // the pool must not keep the response alive
		p.pool.Put(zw)
		return err
	}
}

// acceptsGzip reads Accept-Encoding headers: gzip listed with a q above 0,
// or, if gzip is not listed, "*" so.
func acceptsGzip(values []string) bool {
	gzipQ, anyQ := -1.0, -1.0
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(part, ";")
			switch coding = strings.TrimSpace(coding); {
			case strings.EqualFold(coding, "gzip"):
				gzipQ = qValue(params)
			case coding == "*":
				anyQ = qValue(params)
			}
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return anyQ > 0
}

// qValue reads the q parameter of a coding: 1 when absent or unreadable.
func qValue(params string) float64 {
	for param := range strings.SplitSeq(params, ";") {
		name, value, _ := strings.Cut(param, "=")
		if strings.TrimSpace(name) != "q" {
			continue
		}
		if q, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
			return q
		}
	}
	return 1
}
