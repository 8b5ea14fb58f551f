package main

import (
	"context"
	"fmt"
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

// newReportServer builds the server one client sees. Like the Python
// report server, it always advertises tools, and a client without the
// credential gets an empty list rather than an error.
func newReportServer(e era, a access) *mcp.Server {
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
		}, fetchDailyReport)
	}
	if a >= accessRead {
		mcp.AddTool(s, &mcp.Tool{
			Name:        "list_report_dates",
			Description: "List available report dates",
		}, listReportDates)
	}
	return s
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
