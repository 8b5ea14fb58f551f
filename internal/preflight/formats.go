package preflight

// The output formats of mcpwatch check's --format, named once: the CLI
// offers them (the other commands offer text and json), and doctor reads
// them back from a workflow's command line.
const (
	FormatText   = "text"
	FormatJSON   = "json"
	FormatJUnit  = "junit"
	FormatGitHub = "github"
)

// Formats are check's formats, in the order its help lists them.
var Formats = []string{FormatText, FormatJSON, FormatJUnit, FormatGitHub}
