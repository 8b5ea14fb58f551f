package main

import (
	"context"
	"fmt"

	"github.com/prometheus/common/version"
)

func cmdVersion(_ context.Context, c *cli, _ []string) int {
	fmt.Fprintln(c.stdout, version.Print("mcpwatch"))
	return exitOK
}
