package fio

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
)

// AllJobs returns the jobs of a local run or of client/server output.
func (o *Output) AllJobs() []JobResult {
	if len(o.Jobs) > 0 {
		return o.Jobs
	}
	var out []JobResult
	for _, j := range o.ClientStats {
		// fio adds an "All clients" summary after the per-client jobs.
		if j.Name != "All clients" {
			out = append(out, j)
		}
	}
	return out
}

// ParseOutputs reads every JSON document in fio's stdout, in order. fio may
// print text around them (warnings such as "cache invalidation ...
// Permission denied" on raw devices): such lines are returned as noise.
func ParseOutputs(r io.Reader) (docs []Output, raws [][]byte, noise []string, err error) {
	err = scanDocuments(r, func(raw []byte) error {
		o, err := decode(raw)
		if err != nil {
			return err
		}
		docs = append(docs, o)
		raws = append(raws, raw)
		return nil
	}, func(line string) { noise = append(noise, line) })
	return docs, raws, noise, err
}

// scanDocuments splits fio's output into top-level JSON documents. fio
// pretty-prints each document starting with a line "{" and ending with a
// line "}"; everything else is passed to noise.
func scanDocuments(r io.Reader, doc func([]byte) error, noise func(string)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 256*1024), 64*1024*1024)
	var buf bytes.Buffer
	in := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !in && strings.TrimRight(line, " \r") == "{":
			in = true
			buf.Reset()
			buf.WriteString(line)
			buf.WriteByte('\n')
		case in:
			buf.WriteString(line)
			buf.WriteByte('\n')
			if strings.TrimRight(line, " \r") == "}" {
				in = false
				raw := append([]byte(nil), buf.Bytes()...)
				if err := doc(raw); err != nil {
					return err
				}
			}
		default:
			if s := strings.TrimSpace(line); s != "" {
				noise(s)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if in {
		return fmt.Errorf("fio's JSON output ends in the middle of a document (%d bytes read)", buf.Len())
	}
	return nil
}
