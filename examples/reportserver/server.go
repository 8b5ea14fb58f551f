package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// era is which protocol generations the server speaks.
type era string

const (
	eraModern era = "modern" // 2026-07-28 only: stateless, server/discover
	eraLegacy era = "legacy" // the initialize handshake, 2024-11-05 to 2025-11-25
	eraDual   era = "dual"   // both
)

const versionModern = "2026-07-28"

// versions is what ServerOptions.SupportedProtocolVersions gets for an era.
func (e era) versions() []string {
	var out []string
	for _, v := range mcp.SupportedProtocolVersions() {
		modern := v >= versionModern
		if e == eraDual || (e == eraModern) == modern {
			out = append(out, v)
		}
	}
	return out
}

func parseEra(s string) (era, error) {
	switch e := era(s); e {
	case eraModern, eraLegacy, eraDual:
		return e, nil
	}
	return "", fmt.Errorf("unknown era %q: use modern, legacy or dual", s)
}

// access is what a client's credentials allow it to see.
type access int

const (
	accessNone access = iota // no credential: the silent failure, zero tools
	accessRead               // read scope: list_report_dates only
	accessFull               // both tools
)

// scopeAccess is the access a valid credential grants under REPORT_SCOPE.
func scopeAccess(scope string) access {
	if scope == "read" {
		return accessRead
	}
	return accessFull
}

// upstream is the server's own credential for the report API behind it:
// check returns an error when the API would refuse it (the key revoked).
// A nil upstream has no key to lose.
type upstream interface {
	check() error
}

// keyFile is an API key read from a file at every tool call, so emptying
// the file revokes it while the server runs.
type keyFile string

func (f keyFile) check() error {
	b, err := os.ReadFile(string(f))
	if err != nil || strings.TrimSpace(string(b)) == "" {
		return errors.New("upstream API error: 401 Unauthorized: the report API rejected the server's key (revoked or missing)")
	}
	return nil
}

// readOnly annotates a tool that only reads, so a monitor may call it.
var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true}

// newReportServer builds the server one client sees. Like the Python
// report server, it always advertises tools, and a client without the
// credential gets an empty list rather than an error. With an upstream
// whose key is revoked it still lists both tools, and every call fails
// (isError), as real servers behind an expired API key do.
func newReportServer(e era, a access, up upstream) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "report-server", Version: "1.0.0"}, &mcp.ServerOptions{
		SupportedProtocolVersions: e.versions(),
		Capabilities:              &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		// The tool list depends on the credential: cacheable for a minute,
		// by the requesting client only.
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			c.TTLMs, c.CacheScope = 60_000, "private"
		},
	})
	if a >= accessFull {
		mcp.AddTool(s, &mcp.Tool{
			Name:        "fetch_daily_report",
			Description: "Fetch the daily sales report",
			Annotations: readOnly,
		}, guarded(up, fetchDailyReport))
	}
	if a >= accessRead {
		mcp.AddTool(s, &mcp.Tool{
			Name:        "list_report_dates",
			Description: "List available report dates",
			Annotations: readOnly,
		}, guarded(up, listReportDates))
	}
	return s
}

// guarded checks the upstream key before a tool runs; go-sdk turns the
// error into a result with isError: true.
func guarded[In, Out any](up upstream, h mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		if up != nil {
			if err := up.check(); err != nil {
				var zero Out
				return nil, zero, err
			}
		}
		return h(ctx, req, in)
	}
}

type fetchInput struct {
	Date string `json:"date" jsonschema:"the day of the report, YYYY-MM-DD"`
}

type report struct {
	Date       string  `json:"date"`
	Orders     int     `json:"orders"`
	RevenueEUR float64 `json:"revenue_eur"`
}

// fetchDailyReport returns a small fake report, the same for the same day.
func fetchDailyReport(_ context.Context, _ *mcp.CallToolRequest, in fetchInput) (*mcp.CallToolResult, report, error) {
	day, err := time.Parse(time.DateOnly, in.Date)
	if err != nil {
		return nil, report{}, fmt.Errorf("date %q is not a day in the form YYYY-MM-DD", in.Date)
	}
	orders := 20 + day.YearDay()%30
	return nil, report{Date: in.Date, Orders: orders, RevenueEUR: float64(orders) * 29.5}, nil
}

type dates struct {
	Dates []string `json:"dates"`
}

func listReportDates(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, dates, error) {
	return nil, dates{Dates: []string{"2026-08-01", "2026-08-02", "2026-08-03"}}, nil
}
