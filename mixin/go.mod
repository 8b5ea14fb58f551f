module github.com/mcpwatch/mcpwatch/mixin

go 1.26.8

require (
	github.com/google/go-jsonnet v0.22.0
	github.com/mcpwatch/mcpwatch v0.0.0-00010101000000-000000000000
	go.yaml.in/yaml/v3 v3.0.5
)

require (
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	sigs.k8s.io/yaml v1.4.0 // indirect
)

replace github.com/mcpwatch/mcpwatch => ..
