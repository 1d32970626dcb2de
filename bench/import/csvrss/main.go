// Command csvrss runs "storbench import" of a CSV in a child process and
// prints its wall time and peak resident memory (getrusage's ru_maxrss of
// the child); it exits 1 when the peak is above -max-rss.
//
// Usage: csvrss -storbench ./storbench -csv big.csv -db results.db [-max-rss 300MiB]
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	bin := flag.String("storbench", "", "storbench binary")
	csv := flag.String("csv", "", "CSV to import")
	db := flag.String("db", "", "database to import into (created)")
	maxMiB := flag.Int64("max-rss-mib", 300, "peak RSS allowed, MiB")
	flag.Parse()
	if *bin == "" || *csv == "" || *db == "" {
		log.Fatal("-storbench, -csv and -db are required")
	}
	fi, err := os.Stat(*csv)
	if err != nil {
		log.Fatal(err)
	}
	cmd := exec.Command(*bin, "--db", *db, "import", *csv, "--output", "json")
	cmd.Stderr = os.Stderr
	start := time.Now()
	out, err := cmd.Output()
	wall := time.Since(start)
	if err != nil {
		log.Fatalf("storbench import: %v\n%s", err, out)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		log.Fatal("no resource usage for the child")
	}
	peakMiB := float64(ru.Maxrss) / 1024 // Linux: KiB
	fmt.Printf("imported %s (%.1f MB): %.2f s wall, %.2f s user, %.2f s sys, peak RSS %.1f MiB (limit %d MiB)\n",
		*csv, float64(fi.Size())/1e6, wall.Seconds(), time.Duration(ru.Utime.Nano()).Seconds(), time.Duration(ru.Stime.Nano()).Seconds(), peakMiB, *maxMiB)
	if peakMiB > float64(*maxMiB) {
		fmt.Println("FAIL: peak RSS above the limit")
		os.Exit(1)
	}
}
