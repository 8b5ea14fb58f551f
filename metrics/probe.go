package metrics

import "github.com/prometheus/client_golang/prometheus"

// ProbeRegistry returns a fresh registry holding the metrics of one server,
// rendered from st, for the blackbox-style /probe?server=NAME endpoint: the
// same series /metrics has for that server, with the same names and labels,
// and nothing else (no mcpwatch_servers, no process metrics).
func ProbeRegistry(st ServerStatus) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(&serverCollector{descs: newDescs(), status: st})
	return reg
}

// serverCollector renders a single status with the Collector's own code.
type serverCollector struct {
	descs  *descs
	status ServerStatus
}

func (c *serverCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs.all {
		if d != c.descs.servers {
			ch <- d
		}
	}
}

func (c *serverCollector) Collect(ch chan<- prometheus.Metric) {
	c.descs.collectServer(ch, &c.status)
}
