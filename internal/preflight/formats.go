package preflight

// The output formats of mcpwatch check's --format, named once: the CLI
// writes them (its table of formats; the other commands write text and
// json), and doctor reads them back from a workflow's command line.
const (
	FormatText   = "text"
	FormatJSON   = "json"
	FormatJUnit  = "junit"
	FormatGitHub = "github"
)
