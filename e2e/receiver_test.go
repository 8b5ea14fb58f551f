//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// notification is one Alertmanager webhook delivery (the fields of its
// version-4 payload that the tests read) and when it arrived.
type notification struct {
	Received    time.Time         `json:"-"`
	Status      string            `json:"status"` // firing or resolved (resolved: every alert in the group)
	Receiver    string            `json:"receiver"`
	GroupLabels map[string]string `json:"groupLabels"`
	Alerts      []webhookAlert    `json:"alerts"`
}

type webhookAlert struct {
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

func (n notification) String() string {
	var alerts []string
	for _, a := range n.Alerts {
		alerts = append(alerts, fmt.Sprintf("%s %s{server=%q,tool=%q} summary=%q",
			a.Status, a.Labels["alertname"], a.Labels["server"], a.Labels["tool"], a.Annotations["summary"]))
	}
	return fmt.Sprintf("%s %s group %v: %s", n.Received.Format("15:04:05.000"), n.Status, n.GroupLabels, strings.Join(alerts, "; "))
}

// receiver is the webhook Alertmanager notifies: an httptest server on
// 127.0.0.1 that keeps every notification with its arrival time.
type receiver struct {
	srv *httptest.Server

	mu   sync.Mutex
	got  []notification
	errs []string
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serveHTTP))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) url() string { return r.srv.URL + "/alerts" }

func (r *receiver) serveHTTP(w http.ResponseWriter, req *http.Request) {
	received := time.Now()
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	var n notification
	if err == nil {
		err = json.Unmarshal(body, &n)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.errs = append(r.errs, fmt.Sprintf("%s %s: %v: %.200s", req.Method, req.URL.Path, err, body))
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n.Received = received
	r.got = append(r.got, n)
}

// notifications returns what arrived so far, and an error for any delivery
// that was not a webhook payload.
func (r *receiver) notifications() ([]notification, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) > 0 {
		return nil, fmt.Errorf("bad webhook deliveries: %s", strings.Join(r.errs, "; "))
	}
	return append([]notification(nil), r.got...), nil
}

// firstSince returns the first notification received at or after since that
// matches, or false.
func (r *receiver) firstSince(since time.Time, match func(notification) bool) (notification, bool, error) {
	got, err := r.notifications()
	if err != nil {
		return notification{}, false, err
	}
	for _, n := range got {
		if !n.Received.Before(since) && match(n) {
			return n, true, nil
		}
	}
	return notification{}, false, nil
}

// alertsNamed returns the alerts of n with the given alertname and server.
func (n notification) alertsNamed(alertname, server string) []webhookAlert {
	var out []webhookAlert
	for _, a := range n.Alerts {
		if a.Labels["alertname"] == alertname && a.Labels["server"] == server {
			out = append(out, a)
		}
	}
	return out
}

// toolsIn returns the sorted tool labels of alerts.
func toolsIn(alerts []webhookAlert) []string {
	var tools []string
	for _, a := range alerts {
		if tool := a.Labels["tool"]; tool != "" {
			tools = append(tools, tool)
		}
	}
	sort.Strings(tools)
	return tools
}
