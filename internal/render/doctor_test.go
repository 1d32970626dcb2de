package render

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/storbench/storbench/internal/result"
)

func TestDoctorText(t *testing.T) {
	doc := DoctorDocument{Checks: []result.Check{
		{Area: "local", Name: "fio", Status: result.CheckOK, Detail: "fio-3.33"},
		{Area: "local", Name: "fio libaio engine", Status: result.CheckWarn, Detail: "missing: suites fall back to psync and queue depths above 1 are not honoured",
			Fix: "install a fio built with libaio (Debian/Ubuntu's fio has it)"},
		{Area: "local", Name: "results database", Status: result.CheckFail, Detail: "/root/file is not a directory", Fix: "pass --db PATH in a writable directory"},
		{Area: "api", Name: "server", Status: result.CheckOK, Detail: "https://10.0.0.1:6443, v1.31.2+k3s1"},
		{Area: "nodes", Name: "pi4-1", Status: result.CheckInfo, Detail: "Ready, arm64"},
	}}
	var out bytes.Buffer
	if err := Formatted(&out, "table", doc, DoctorText); err != nil {
		t.Fatal(err)
	}
	golden(t, "doctor.txt", out.Bytes())

	out.Reset()
	if err := Formatted(&out, "json", doc, DoctorText); err != nil {
		t.Fatal(err)
	}
	var back DoctorDocument
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || len(back.Checks) != 5 || back.Checks[2] != doc.Checks[2] {
		t.Errorf("json: %v %s", err, out.String())
	}
}
