package contracts

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// FuzzParseFile: a contracts file, whatever it holds, is refused with an
// error naming where, or read into contracts that keep the format's
// bounds; a file that is read is one JSON value, and reads the same once
// re-indented. make fuzz runs it for a while; go test runs the seeds.
func FuzzParseFile(f *testing.F) {
	for _, path := range []string{"../../examples/report.tools.json", "../config/testdata/clients/mcp-probe/datadog.tools.json"} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		`{"tools":{}}`, `{}`, `[]`, `null`, `{"tools":{"":{}}}`, `{"tools":{"a":{}}}`, `{"tools":{"a":null}}`,
		`{"tools":{"a":{"input":{"x":1},"retry":{"attempts":3,"delayMs":100,"retryOn":[503,"timeout"]},"expect":{"status":"pass","contains":"ok","maxRows":5}}}}`,
		`{"tools":{"a":{"expect":{"errorCode":-32602}}}}`, `{"tools":{"a":{"expect":{"errorCode":-32602,"status":"pass"}}}}`,
		`{"tools":{"a":{"retry":{"attempts":11}}}}`, `{"tools":{"a":{"retry":{"delayMs":-1}}}}`, `{"tools":{"a":{"input":[1]}}}`,
		`{"tools":{"a":{"expect":{"jsonSchema":{"type":"object","required":["x"]}}}}}`,
		`{"tools":{"a":{"expect":{"jsonSchema":{"$ref":"#/$defs/n","$defs":{"n":{"anyOf":[{"$ref":"#/$defs/n"},{"type":"null"}]}}}}}}}`,
		`{"tools":{"a":{"expect":{"jsonSchema":{"$ref":"https://example.com/schema.json"}}}}}`,
		`{"tools":{"a":{"unknown":1}}}`, `{"tools":{"a":{"expect":{"not_error_code":[1.5]}}}}`, `{"tools":{}}]`, `{"tools":{}} {}`,
		`{"tools":{"a":{"expect":{"requiredFields":[" "]}}}}`, `{"tools":{"a":{"allowSideEffects":true}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := ParseFile(data)
		again, err2 := ParseFile(data)
		if (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Fatalf("two reads disagree: %v / %v", err, err2)
		}
		if err != nil {
			msg := err.Error()
			if !strings.Contains(msg, "tools") {
				t.Fatalf("the error does not say where: %v", err)
			}
			return
		}
		_ = again
		if !json.Valid(data) {
			t.Fatalf("read %q, which is not one JSON value", data)
		}
		for name, c := range file.Tools {
			switch {
			case c.Tool != name || name == "":
				t.Fatalf("contract %q names tool %q", name, c.Tool)
			case !json.Valid(c.Input) || !bytes.HasPrefix(c.Input, []byte("{")):
				t.Fatalf("%s: input %q is not an object", name, c.Input)
			case c.Retry.Attempts < 1 || c.Retry.Attempts > MaxAttempts:
				t.Fatalf("%s: %d attempts", name, c.Retry.Attempts)
			case c.Retry.Delay < 0 || c.Retry.Delay > 10*time.Minute:
				t.Fatalf("%s: delay %v", name, c.Retry.Delay)
			case c.Expect.Status != StatusPass && c.Expect.Status != StatusFail:
				t.Fatalf("%s: status %q", name, c.Expect.Status)
			case c.Expect.ErrorCode != nil && c.Expect.Status != StatusFail:
				t.Fatalf("%s: an expected error code, but status %q", name, c.Expect.Status)
			case c.Expect.MaxRows != nil && *c.Expect.MaxRows < 0:
				t.Fatalf("%s: maxRows %d", name, *c.Expect.MaxRows)
			case len(c.Expect.JSONSchema) > 0 && c.Expect.schema == nil:
				t.Fatalf("%s: a schema kept unresolved", name)
			}
		}
		// White space is not meaning: the file re-indented reads the same.
		var indented bytes.Buffer
		if err := json.Indent(&indented, data, "", "\t"); err != nil {
			t.Fatalf("json.Indent of a file that was read: %v", err)
		}
		back, err := ParseFile(indented.Bytes())
		if err != nil {
			t.Fatalf("re-indented, the file is refused: %v", err)
		}
		if !reflect.DeepEqual(comparable(file), comparable(back)) {
			t.Fatalf("re-indented, the file reads otherwise:\n%+v\n%+v", comparable(file), comparable(back))
		}
	})
}

// comparable is a file without what it derives from its schemas
// (unexported pointers): what the file said, field by exported field.
func comparable(f File) map[string]Contract {
	out := make(map[string]Contract, len(f.Tools))
	for n, c := range f.Tools {
		var e Expect
		src, dst := reflect.ValueOf(c.Expect), reflect.ValueOf(&e).Elem()
		for i := range src.NumField() {
			if src.Type().Field(i).IsExported() {
				dst.Field(i).Set(src.Field(i))
			}
		}
		c.Expect = e
		out[n] = c
	}
	return out
}
