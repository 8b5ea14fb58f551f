// Package browser opens a URL in the person's web browser, for mcpwatch
// login. It only starts a browser: the URL is always printed besides, so a
// machine without one (a server over SSH) signs in from any other.
package browser

import (
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
)

// Open asks a browser to open url: each command of $BROWSER in turn (a
// list separated by colons, as xdg-utils and Python's webbrowser read it;
// %s in a command stands for the URL, which is otherwise its last
// argument), else the platform's opener (xdg-open on Linux and the BSDs,
// open on macOS, rundll32 on Windows). It returns once a command has
// started, without waiting for the browser, which may outlive mcpwatch: a
// goroutine reaps the command when it exits. The error says why none
// started.
func Open(url string, getenv func(string) string) error {
	var tried []string
	for _, argv := range commands(url, getenv("BROWSER"), runtime.GOOS) {
		path, err := exec.LookPath(argv[0])
		if err != nil {
			tried = append(tried, argv[0]+" (not found)")
			continue
		}
		cmd := exec.Command(path, argv[1:]...) //nolint:gosec // G204: the person's own $BROWSER, or the platform's opener
		if err := cmd.Start(); err != nil {
			tried = append(tried, fmt.Sprintf("%s (%v)", argv[0], err))
			continue
		}
		go func() { _ = cmd.Wait() }() // reaped when it exits; an opener exits at once
		return nil
	}
	if len(tried) == 0 {
		return errors.New("no browser is configured: set $BROWSER")
	}
	return fmt.Errorf("no browser could be started: tried %s; set $BROWSER", strings.Join(tried, ", "))
}

// commands are the command lines to try, in order.
func commands(url, browserVar, goos string) [][]string {
	var out [][]string
	for _, c := range strings.Split(browserVar, ":") {
		fields := strings.Fields(c)
		if len(fields) == 0 {
			continue
		}
		substituted := false
		for i, f := range fields {
			if strings.Contains(f, "%s") {
				fields[i] = strings.ReplaceAll(strings.ReplaceAll(f, "%s", url), "%%", "%")
				substituted = true
			}
		}
		if !substituted {
			fields = append(fields, url)
		}
		out = append(out, fields)
	}
	if len(out) > 0 {
		return out
	}
	switch goos {
	case "darwin":
		return [][]string{{"open", url}}
	case "windows":
		return [][]string{{"rundll32", "url.dll,FileProtocolHandler", url}}
	}
	return [][]string{{"xdg-open", url}, {"wslview", url}}
}
