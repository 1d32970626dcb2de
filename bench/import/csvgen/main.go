// Command csvgen writes a storbench generic CSV of N rows for the import
// memory benchmark: results of 8 metrics each (every metric storbench
// knows), over 100 targets, 5 workloads and 50 label sets, repeated.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"
)

func main() {
	rows := flag.Int("rows", 1000000, "number of data rows")
	out := flag.String("out", "", "output file")
	flag.Parse()
	if *out == "" {
		log.Fatal("-out is required")
	}
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "target,labels,round,workload,metric,value,unit")
	workloads := []string{"seq-read", "seq-write", "rand-read-4k-qd32", "rand-write-4k-qd32", "etcd-fdatasync"}
	metrics := []struct {
		name, unit string
		base       float64
	}{{"iops", "IOPS", 20000}, {"bw", "MB/s", 400}, {"lat_mean", "us", 300}, {"lat_p50", "us", 250},
		{"lat_p90", "us", 600}, {"lat_p99", "ms", 2.5}, {"lat_p999", "ms", 9}, {"sync_p99", "ms", 4}}
	for i := 0; i < *rows; i++ {
		res, m := i/len(metrics), metrics[i%len(metrics)]
		target := fmt.Sprintf("node-%02d", res%100)
		workload := workloads[(res/100)%len(workloads)]
		labels := fmt.Sprintf("storage=class-%02d;rack=r%d", (res/500)%50, (res/500)%7)
		v := m.base * (0.8 + 0.4*float64((i*7919)%1000)/1000)
		fmt.Fprintf(w, "%s,%s,isolated,%s,%s,%.3f,%s\n", target, labels, workload, m.name, v, m.unit)
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}
