package daemon

import (
	"html/template"
	"math"
	"strconv"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/verdict"
)

// The pages draw a server's last probes as inline SVG made here, on the
// server: a strip of state colours and two sparklines (probe duration, tools
// listed). No script, nothing fetched, so the page's Content-Security-Policy
// stays as strict as it is. The SVG is written from numbers and from this
// package's own class names and words only, and its title is escaped all
// the same. Writing it with strconv into one buffer
// keeps a page of 200 rows (or 10,000) as cheap as its text.

// Sizes in CSS pixels: one cell of the strip per kept probe.
const (
	trendCell   = 4 // a probe's width in the strip and between sparkline points
	trendStripH = 10
	trendSparkH = 18
)

// trendView is what a row shows of its server's last probes; empty when
// none has been kept.
type trendView struct {
	Probes int
	Strip  template.HTML
	// Duration and Tools are the sparklines, with the range they span in
	// words for the reader ("20ms–312ms", "4–6 tools").
	Duration      template.HTML
	DurationRange string
	Tools         template.HTML
	ToolsRange    string
}

// trend reads the server's kept probes and draws them; buf is reused
// between rows.
func (s *server) trend(buf []trendPoint) (trendView, []trendPoint) {
	s.mu.Lock()
	buf = s.history.trend(buf[:0])
	s.mu.Unlock()
	return newTrendView(buf), buf
}

func newTrendView(points []trendPoint) trendView {
	if len(points) == 0 {
		return trendView{}
	}
	v := trendView{Probes: len(points), Strip: stripSVG(points)}
	if len(points) < 2 {
		return v // a line needs two probes
	}
	v.Duration, v.DurationRange = durationSVG(points)
	v.Tools, v.ToolsRange = toolsSVG(points)
	return v
}

// stripSVG is one cell per probe, coloured by its state's level (a state
// this version does not know is a warning, as the page shows it): a path
// per level, so twenty probes cost a few hundred bytes.
func stripSVG(points []trendPoint) template.HTML {
	w := len(points) * trendCell
	b := svgOpen(make([]byte, 0, 160+len(points)*24), w, trendStripH, "last probes, oldest first")
	levels := [...]verdict.Level{verdict.LevelCritical, verdict.LevelWarning, verdict.LevelPending, verdict.LevelOK}
	for _, level := range levels {
		start := len(b)
		for i, p := range points {
			if p.level != level {
				continue
			}
			if len(b) == start {
				b = append(b, `<path class="t-`...)
				b = append(b, level...)
				b = append(b, `" d="`...)
			}
			b = append(b, 'M')
			b = strconv.AppendInt(b, int64(i*trendCell), 10)
			b = append(b, " 0h"...)
			b = strconv.AppendInt(b, trendCell-1, 10)
			b = append(b, 'v')
			b = strconv.AppendInt(b, trendStripH, 10)
			b = append(b, "h-"...)
			b = strconv.AppendInt(b, trendCell-1, 10)
			b = append(b, 'z')
		}
		if len(b) != start {
			b = append(b, `"/>`...)
		}
	}
	return template.HTML(append(b, "</svg>"...)) //nolint:gosec // G203: numbers and this file's words only (see svgOpen)
}

// durationSVG is the sparkline of every probe's duration, failed ones
// included, on a log scale from the shortest to the longest: a 10 s timeout
// among 200 ms probes shows as a peak without flattening the rest.
func durationSVG(points []trendPoint) (template.HTML, string) {
	lo, hi := points[0].duration, points[0].duration
	for _, p := range points {
		lo, hi = min(lo, p.duration), max(hi, p.duration)
	}
	lo = max(lo, time.Microsecond) // a log scale needs a floor above 0
	span := math.Log(float64(max(hi, lo))) - math.Log(float64(lo))
	y := func(p trendPoint) (int, bool) {
		if span <= 0 {
			return trendSparkH / 2, true
		}
		f := (math.Log(float64(max(p.duration, lo))) - math.Log(float64(lo))) / span
		return trendSparkH - 1 - int(f*(trendSparkH-2)), true
	}
	words := "probe duration " + shortDuration(lo) + " to " + shortDuration(hi) + " (log scale)"
	return sparkSVG(points, y, words), shortDuration(lo) + "–" + shortDuration(hi)
}

// toolsSVG is the sparkline of the tools each successful probe listed,
// from the fewest to the most; a failed probe (which lists none) breaks the
// line rather than dropping it to zero.
func toolsSVG(points []trendPoint) (template.HTML, string) {
	lo, hi, seen := int32(0), int32(0), false
	for _, p := range points {
		if !p.listed {
			continue
		}
		if !seen {
			lo, hi, seen = p.tools, p.tools, true
		}
		lo, hi = min(lo, p.tools), max(hi, p.tools)
	}
	if !seen {
		return "", ""
	}
	y := func(p trendPoint) (int, bool) {
		if !p.listed {
			return 0, false
		}
		if hi == lo {
			return trendSparkH / 2, true
		}
		return trendSparkH - 1 - int(int64(p.tools-lo)*int64(trendSparkH-2)/int64(hi-lo)), true
	}
	span := strconv.Itoa(int(lo))
	if hi != lo {
		span += "–" + strconv.Itoa(int(hi))
	}
	return sparkSVG(points, y, "tools listed "+span), span + " tools"
}

// sparkSVG draws y of each point (false: no value, the line breaks) as one
// path, a point per cell centre.
func sparkSVG(points []trendPoint, y func(trendPoint) (int, bool), words string) template.HTML {
	w := len(points) * trendCell
	b := svgOpen(make([]byte, 0, 200+len(points)*10), w, trendSparkH, words)
	b = append(b, `<path class="t-line" d="`...)
	pen := false
	for i, p := range points {
		py, ok := y(p)
		if !ok {
			pen = false
			continue
		}
		if pen {
			b = append(b, 'L')
		} else {
			b = append(b, 'M')
		}
		b = strconv.AppendInt(b, int64(i*trendCell+trendCell/2), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(py), 10)
		if !pen {
			// A line of one point draws nothing; with round caps, a
			// zero-length one draws a dot.
			b = append(b, "h0"...)
		}
		pen = true
	}
	b = append(b, `"/>`...)
	return template.HTML(append(b, "</svg>"...)) //nolint:gosec // G203: numbers and this file's words only (see svgOpen)
}

// svgOpen starts an SVG of w×h pixels whose title is words, escaped.
func svgOpen(b []byte, w, h int, words string) []byte {
	b = append(b, `<svg class="trend" xmlns="http://www.w3.org/2000/svg" width="`...)
	b = strconv.AppendInt(b, int64(w), 10)
	b = append(b, `" height="`...)
	b = strconv.AppendInt(b, int64(h), 10)
	b = append(b, `" viewBox="0 0 `...)
	b = strconv.AppendInt(b, int64(w), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(h), 10)
	b = append(b, `" role="img" aria-label="`...)
	b = append(b, template.HTMLEscapeString(words)...)
	b = append(b, `"><title>`...)
	b = append(b, template.HTMLEscapeString(words)...)
	return append(b, "</title>"...)
}

// shortDuration is a duration in two or three digits: "840µs", "45ms",
// "1.2s", "10s".
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
