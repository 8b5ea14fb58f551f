package daemon

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// scrapeTimeoutHeader is the header in which Prometheus sends every scrape's
// timeout, in seconds.
const scrapeTimeoutHeader = "X-Prometheus-Scrape-Timeout-Seconds"

// defaultScrapeTimeout is the scrape timeout assumed when a request sends
// none (or 0), as blackbox_exporter assumes: a /probe then ends within two
// minutes, whatever the server's timeout.
const defaultScrapeTimeout = 120 * time.Second

// defaultProbeTimeoutOffset is Options.ProbeTimeoutOffset's default, as
// blackbox_exporter's --timeout-offset: time left between the probe's end
// and the scrape's, for the answer to reach Prometheus.
const defaultProbeTimeoutOffset = 500 * time.Millisecond

// probeTimeout is how long a /probe of a server whose own timeout is
// serverTimeout may take, by blackbox_exporter's rule: the scrape's timeout
// (the header, else defaultScrapeTimeout) less offset, unless the server's
// timeout is shorter, or the scrape's is shorter than the offset (then the
// server's). A header that is not a number is an error that names it.
func probeTimeout(r *http.Request, serverTimeout, offset time.Duration) (time.Duration, error) {
	scrape := defaultScrapeTimeout
	if v := r.Header.Get(scrapeTimeoutHeader); v != "" {
		secs, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(secs) || math.IsInf(secs, 0) || math.Abs(secs) > maxScrapeTimeout.Seconds() {
			return 0, fmt.Errorf("header %s: %q is not a number of seconds (Prometheus sends the scrape's timeout there, such as 9.5)", scrapeTimeoutHeader, truncateHeader(v))
		}
		if secs != 0 { // 0 is the default; below 0, the server's timeout
			scrape = time.Duration(secs * float64(time.Second))
		}
	}
	budget := scrape - offset
	if budget <= 0 || serverTimeout < budget {
		return serverTimeout, nil
	}
	return budget, nil
}

// maxScrapeTimeout bounds the header's value: far above any scrape
// timeout, well inside a time.Duration.
const maxScrapeTimeout = 24 * time.Hour

// truncateHeader cuts a header value for an error message (sanitize.Line:
// between runes, on one line).
func truncateHeader(v string) string { return sanitize.Line(v, 32) }
