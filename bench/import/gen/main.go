// Command gen writes N fio JSON files derived from real fio outputs
// (internal/importer/testdata), each with its figures scaled by a different
// factor and its own timestamp, for the import benchmark.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
)

func main() {
	n := flag.Int("n", 1000, "number of files")
	out := flag.String("out", "", "output folder")
	src := flag.String("samples", "internal/importer/testdata", "folder with the real fio outputs")
	flag.Parse()
	if *out == "" {
		log.Fatal("-out is required")
	}
	var bases []map[string]any
	for _, name := range []string{"fio-randread-4k-qd32.json", "fio-seqread-1m-qd8.jsonplus", "fio-etcd-fdatasync.json", "fio-client-server.json"} {
		data, err := os.ReadFile(filepath.Join(*src, name))
		if err != nil {
			log.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			log.Fatalf("%s: %v", name, err)
		}
		bases = append(bases, doc)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	var total int64
	for i := 0; i < *n; i++ {
		base := bases[i%len(bases)]
		factor := 0.7 + 0.6*math.Abs(math.Sin(float64(i)*0.37))
		doc := scale(base, factor, "").(map[string]any)
		doc["timestamp"] = 1795000000 + float64(i*60)
		doc["timestamp_ms"] = (1795000000 + float64(i*60)) * 1000
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			log.Fatal(err)
		}
		total += int64(len(b))
		if err := os.WriteFile(filepath.Join(*out, fmt.Sprintf("fio-%04d.json", i)), append(b, '\n'), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("wrote %d files, %d bytes on average\n", *n, total/int64(*n))
}

// scale multiplies the measured figures (not options, counts of jobs or
// timestamps) by factor.
func scale(v any, factor float64, key string) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k == "job options" || k == "global options" {
				out[k] = e
				continue
			}
			out[k] = scale(e, factor, k)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = scale(e, factor, key)
		}
		return out
	case float64:
		switch key {
		case "groupid", "error", "eta", "elapsed", "port", "timestamp", "timestamp_ms":
			return x
		}
		if x == math.Trunc(x) {
			return math.Round(x * factor) // counts and integer fields stay integers
		}
		return math.Round(x*factor*1000) / 1000
	}
	return v
}
