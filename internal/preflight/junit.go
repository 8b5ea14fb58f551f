package preflight

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/mcpwatch/mcpwatch/internal/util/sanitize"
)

// The JUnit XML shape CI systems read (Jenkins, GitLab, GitHub test
// reporters): one <testsuites> holding one <testsuite>, one <testcase> per
// server, a <failure> on each failing one.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// junitClassname groups the testcases in CI views.
const junitClassname = "mcpwatch.preflight"

// WriteJUnit writes the report as JUnit XML. A run that could not start
// (Report.Error) is one failing testcase named "preflight", so a CI system
// that expects the file still shows why.
func WriteJUnit(w io.Writer, r *Report) error {
	suite := junitSuite{
		Name:      "mcpwatch preflight",
		Time:      seconds(time.Duration(r.Duration)),
		Timestamp: r.Started.UTC().Format("2006-01-02T15:04:05"),
		Properties: []junitProperty{
			{Name: "mcpwatch.version", Value: r.Version},
			{Name: "config", Value: r.Config},
			{Name: "lock", Value: r.Lock},
			{Name: "strict", Value: strconv.FormatBool(r.Strict)},
		},
	}
	if r.Error != "" {
		suite.Cases = append(suite.Cases, junitCase{
			Name: "preflight", Classname: junitClassname, Time: suite.Time,
			Failure: &junitFailure{Message: sanitize.Text(sanitize.OneLine(r.Error)), Type: "config_error", Text: sanitize.Join(strings.Split(r.Error, "\n"), "\n")},
		})
	}
	for _, s := range r.Servers {
		c := junitCase{Name: sanitize.Text(s.Name), Classname: junitClassname, Time: "0"}
		if s.Probe != nil {
			c.Time = seconds(s.Probe.Timings.Total)
		}
		if failures := s.Failures(); len(failures) > 0 {
			var msgs, text []string
			for _, p := range failures {
				msgs = append(msgs, sanitize.Text(p.Message))
				text = append(text, sanitize.Text(p.Message))
				for _, d := range p.Details {
					text = append(text, "    "+sanitize.Text(d))
				}
			}
			c.Failure = &junitFailure{Message: strings.Join(msgs, "; "), Type: string(s.Verdict), Text: strings.Join(text, "\n")}
		}
		var notes []string
		for _, p := range s.Notes() {
			notes = append(notes, "info: "+sanitize.Text(p.Message))
		}
		c.SystemOut = strings.Join(notes, "\n")
		suite.Cases = append(suite.Cases, c)
		suite.Cases = append(suite.Cases, callCases(s)...)
	}
	for _, name := range r.Skipped {
		suite.Cases = append(suite.Cases, junitCase{Name: name, Classname: junitClassname, Time: "0",
			Skipped: &junitSkipped{Message: "not probed: skipped with --skip or ignore:"}})
	}
	suite.Tests = len(suite.Cases)
	for _, c := range suite.Cases {
		switch {
		case c.Failure != nil:
			suite.Failures++
		case c.Skipped != nil:
			suite.Skipped++
		}
	}
	doc := junitSuites{Name: "mcpwatch", Tests: suite.Tests, Failures: suite.Failures, Time: suite.Time, Suites: []junitSuite{suite}}

	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encode JUnit XML: %w", err)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	_, err = w.Write(append(out, '\n'))
	return err
}

// callCases are one testcase per contract: "SERVER call TOOL".
func callCases(s ServerReport) []junitCase {
	var out []junitCase
	for _, c := range s.Calls {
		jc := junitCase{Name: s.Name + " call " + c.Tool, Classname: junitClassname + ".calls", Time: seconds(callDuration(c))}
		var lines []string
		for i, a := range c.Attempts {
			lines = append(lines, fmt.Sprintf("attempt %d: %s", i+1, a.Response))
			for _, as := range a.Assertions {
				lines = append(lines, fmt.Sprintf("  %s %s %s", as.Outcome, as.Name, as.Detail))
			}
		}
		if !c.Passed {
			jc.Failure = &junitFailure{Message: c.Message, Type: c.Reason, Text: strings.Join(lines, "\n")}
		} else {
			jc.SystemOut = strings.Join(lines, "\n")
		}
		out = append(out, jc)
	}
	return out
}

// seconds is a JUnit time attribute: seconds with millisecond precision.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
}
