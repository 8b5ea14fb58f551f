package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// sample is mcpwatch seen at one instant: its metrics, its CPU and memory.
type sample struct {
	at    time.Time
	expo  exposition
	cpu   time.Duration
	mem   memStatus
	bytes int           // size of the /metrics body
	took  time.Duration // the scrape that read expo
}

// apiServer is the part of /api/v1/servers the harness reads.
type apiServer struct {
	Name      string     `json:"name"`
	Probes    uint64     `json:"probes"`
	Skipped   uint64     `json:"skipped"`
	LastProbe *time.Time `json:"last_probe"`
	Calls     []apiCall  `json:"calls"`
}

// snapshot reads mcpwatch's CPU and memory, then scrapes /metrics. The
// counters of the body are as of the request's start (the daemon takes its
// statuses first), which is at; two snapshots bracket the CPU of the first
// scrape and of everything up to the second.
func (d *daemonProc) snapshot(ctx context.Context) (sample, error) {
	var s sample
	s.at = time.Now()
	if err := d.readProc(&s); err != nil {
		return s, err
	}
	body, took, err := d.get(ctx, "/metrics")
	if err != nil {
		return s, err
	}
	s.bytes, s.took = len(body), took
	s.expo, err = parseExposition(bytes.NewReader(body))
	return s, err
}

func (d *daemonProc) readProc(s *sample) error {
	st, err := readProcStat(d.pid())
	if err != nil {
		return fmt.Errorf("read mcpwatch's /proc stat: %w", err)
	}
	s.cpu = st.cpu
	s.mem, err = readMemStatus(d.pid())
	if err != nil {
		return fmt.Errorf("read mcpwatch's /proc status: %w", err)
	}
	return nil
}

// apiPageSize is the page the harness reads /api/v1/servers by, as a
// client of a large fleet would; a daemon that does not page answers the
// whole list at once, with no "next".
const apiPageSize = 5000

func (d *daemonProc) servers(ctx context.Context) (map[string]apiServer, error) {
	out := map[string]apiServer{}
	path := "/api/v1/servers?limit=" + strconv.Itoa(apiPageSize)
	for {
		body, _, err := d.get(ctx, path)
		if err != nil {
			return nil, err
		}
		var list struct {
			Servers []apiServer `json:"servers"`
			Next    string      `json:"next"`
		}
		if err := json.Unmarshal(body, &list); err != nil {
			return nil, fmt.Errorf("decode %s: %w", path, err)
		}
		for _, s := range list.Servers {
			out[s.Name] = s
		}
		if list.Next == "" || len(list.Servers) == 0 {
			return out, nil
		}
		path = "/api/v1/servers?limit=" + strconv.Itoa(apiPageSize) + "&after=" + url.QueryEscape(list.Next)
	}
}
