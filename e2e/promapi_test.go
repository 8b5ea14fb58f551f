//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// promAPI reads Prometheus's HTTP API (/api/v1) and drives its lifecycle
// endpoint (/-/reload).
type promAPI struct {
	base string // http://127.0.0.1:PORT
}

type sample struct {
	Metric map[string]string
	Value  float64
}

type promAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"` // pending or firing
}

type ruleGroup struct {
	Name           string    `json:"name"`
	LastEvaluation time.Time `json:"lastEvaluation"`
	Rules          []struct {
		Name      string `json:"name"`
		Health    string `json:"health"`
		LastError string `json:"lastError"`
	} `json:"rules"`
}

// call does one API request and decodes the "data" of a success envelope.
func (p promAPI) call(method, path string, data any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, p.base+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %.300s", method, path, resp.Status, body)
	}
	if data == nil {
		return nil
	}
	var envelope struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &envelope); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if envelope.Status != "success" {
		return fmt.Errorf("%s %s: status %s: %s", method, path, envelope.Status, envelope.Error)
	}
	return json.Unmarshal(envelope.Data, data)
}

// query evaluates an instant vector query now.
func (p promAPI) query(q string) ([]sample, error) {
	var data struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	if err := p.call(http.MethodGet, "/api/v1/query?query="+url.QueryEscape(q), &data); err != nil {
		return nil, err
	}
	if data.ResultType != "vector" {
		return nil, fmt.Errorf("query %s: result type %s, want vector", q, data.ResultType)
	}
	out := make([]sample, 0, len(data.Result))
	for _, r := range data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: value %v: %w", q, r.Value[1], err)
		}
		out = append(out, sample{Metric: r.Metric, Value: v})
	}
	return out, nil
}

// queryEquals reports whether q returns exactly one sample with value want.
func (p promAPI) queryEquals(q string, want float64) error {
	got, err := p.query(q)
	if err != nil {
		return err
	}
	if len(got) != 1 || got[0].Value != want {
		return fmt.Errorf("query %s: got %v, want one sample of value %v", q, got, want)
	}
	return nil
}

// alerts returns the alerts Prometheus holds as pending or firing.
func (p promAPI) alerts() ([]promAlert, error) {
	var data struct {
		Alerts []promAlert `json:"alerts"`
	}
	err := p.call(http.MethodGet, "/api/v1/alerts", &data)
	return data.Alerts, err
}

func (p promAPI) ruleGroups() ([]ruleGroup, error) {
	var data struct {
		Groups []ruleGroup `json:"groups"`
	}
	err := p.call(http.MethodGet, "/api/v1/rules?type=alert", &data)
	return data.Groups, err
}

// activeAlertmanagers returns the Alertmanager URLs Prometheus sends to.
func (p promAPI) activeAlertmanagers() ([]string, error) {
	var data struct {
		Active []struct {
			URL string `json:"url"`
		} `json:"activeAlertmanagers"`
	}
	if err := p.call(http.MethodGet, "/api/v1/alertmanagers", &data); err != nil {
		return nil, err
	}
	var urls []string
	for _, am := range data.Active {
		urls = append(urls, am.URL)
	}
	return urls, nil
}

// reload makes Prometheus re-read its configuration and rule files.
func (p promAPI) reload() error {
	return p.call(http.MethodPost, "/-/reload", nil)
}

func describeAlerts(alerts []promAlert) string {
	var parts []string
	for _, a := range alerts {
		parts = append(parts, fmt.Sprintf("%s %s{server=%q,tool=%q}", a.State, a.Labels["alertname"], a.Labels["server"], a.Labels["tool"]))
	}
	return strings.Join(parts, ", ")
}
