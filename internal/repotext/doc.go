// Package repotext holds a test over the repository's own text: README,
// docs, help texts, comments, scripts and configuration must speak for
// themselves, naming nothing a reader of the repository cannot see (notes
// kept outside it, the history of how a change was asked for).
package repotext
