package importer

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"

	"github.com/storbench/storbench/internal/result"
)

// Stream reads one input from r. A CSV (detected from the first 64 KiB or
// forced) is read as it streams: each result is handed to emit as soon as
// no later row can belong to it, so a file of millions of rows needs
// little memory. Other formats are read whole (the caller bounds r's
// size) and parsed with Parse, then each result is handed to emit. The
// File returned holds no Results (they went to emit; ResultCount counts
// them); its health records, problems and notes are kept.
func Stream(name string, r io.Reader, opt Options, emit func(result.Result) error) (*File, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := br.Peek(64 << 10)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	format := opt.Format
	if format == "" && len(bytes.TrimSpace(head)) > 0 {
		if fs, err := Detect(name, head); err == nil && len(fs) == 1 && fs[0] == CSV {
			format = CSV
		}
	}
	if format != CSV || len(decodeUTF16(head)) != len(head) {
		data, err := io.ReadAll(br)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		f, err := Parse(name, data, opt)
		if err != nil {
			return nil, err
		}
		for _, res := range f.Results {
			if err := emit(res); err != nil {
				return nil, err
			}
		}
		f.ResultCount, f.Results = len(f.Results), nil
		return f, nil
	}
	h := sha256.New()
	counter := &countingReader{r: io.TeeReader(br, h)}
	f := &File{Name: name, Formats: []Format{CSV}, Tool: "csv"}
	p := &parsed{tool: "csv"}
	fin := newFinisher(name, opt)
	var bom [3]byte
	in := io.Reader(counter)
	if n, _ := io.ReadFull(counter, bom[:]); n < 3 || !bytes.Equal(bom[:], []byte("\xef\xbb\xbf")) {
		in = io.MultiReader(bytes.NewReader(bom[:n]), counter)
	}
	err = streamCSV(in, p, func(res result.Result, line int) error {
		if why := plausible(&res); why != "" {
			p.problems = append(p.problems, result.ImportProblem{Line: line, Kind: result.ProblemRefused, Msg: fmt.Sprintf("result %q not stored: %s", res.Workload, why)})
			return nil
		}
		if _, ok := result.LabelSource.In(res.Labels); !ok {
			result.LabelSource.Set(res.Labels, "csv")
		}
		fin.result(&res)
		f.ResultCount++
		return emit(res)
	})
	if err != nil {
		if pe, ok := err.(*ParseError); ok {
			pe.File, pe.Format = name, CSV
			return nil, pe
		}
		return nil, err
	}
	if _, err := io.Copy(io.Discard, counter); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	f.SHA256, f.Size = hex.EncodeToString(h.Sum(nil)), counter.n
	f.Rows, f.Problems = p.rows, p.problems
	return f, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}
