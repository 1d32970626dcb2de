// Command interleave measures telemetry's effect on IOPS more finely than a
// whole-suite comparison: each workload runs back to back with sampling on
// and off (ABBA order), so each pair is measured seconds apart and slow
// drifts in the machine's other load cancel out.
//
//	go run ./bench/telemetry/interleave -target /var/tmp/benchtel -rounds 10
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"time"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/local"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/telemetry"
)

func main() {
	target := flag.String("target", "", "directory on the disk to test")
	rounds := flag.Int("rounds", 10, "pairs per workload")
	runtime := flag.Duration("runtime", 5*time.Second, "runtime of each measurement")
	flag.Parse()
	if err := run(*target, *rounds, *runtime); err != nil {
		fmt.Fprintln(os.Stderr, "interleave:", err)
		os.Exit(1)
	}
}

func run(target string, rounds int, runtime time.Duration) error {
	if target == "" {
		return fmt.Errorf("-target is required")
	}
	ctx := context.Background()
	std, err := spec.Builtin("standard")
	if err != nil {
		return err
	}
	names := []string{"rand-read-4k-qd1", "rand-write-4k-qd1", "rand-read-4k-qd32", "seq-read"}
	if err := std.Select(names); err != nil {
		return err
	}
	p, err := local.NewTarget(target, local.Options{}).Prepare(ctx, runner.Need{RunID: "interleave", FileSize: 512 << 20, Writers: std.Writes(), Direct: true})
	if err != nil {
		return err
	}
	defer func() {
		if err := p.Cleanup(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "cleanup:", err)
		}
	}()
	if p.Telemetry == nil {
		return fmt.Errorf("target %s offers no telemetry", target)
	}
	sampler, err := p.Telemetry()
	if err != nil {
		return err
	}
	fr := fio.Runner{Cmder: p.Cmder, Dir: p.Dir}
	measure := func(w spec.Workload, on bool) (float64, error) {
		var rec runner.Recording
		if on {
			rec = sampler.Start()
		}
		out, err := fr.Run(ctx, fio.FromWorkload(w, p.File, ""), nil)
		if rec != nil {
			rec.Stop()
		}
		if err != nil {
			return 0, err
		}
		r := fio.ToResult(out.Final.Jobs[0])
		var iops float64
		for _, d := range r.Directions() {
			iops += d.IOPS
		}
		return iops, nil
	}
	fmt.Printf("# %d pairs per workload, %s each, sampling every %s; ratio = IOPS with telemetry / without\n", rounds, runtime, telemetry.DefaultInterval)
	fmt.Printf("%-20s %10s %10s %8s %8s %8s\n", "workload", "on IOPS", "off IOPS", "geomean", "median", "pairs")
	var all []float64
	for _, w := range std.Workloads {
		w.Runtime, w.Ramp, w.FileSize = spec.Duration(runtime), spec.Duration(time.Second), spec.Size(512<<20)
		var ratios []float64
		var sumOn, sumOff float64
		for r := 0; r < rounds; r++ {
			order := []bool{true, false}
			if r%2 == 1 {
				order = []bool{false, true}
			}
			got := map[bool]float64{}
			for _, on := range order {
				v, err := measure(w, on)
				if err != nil {
					return fmt.Errorf("%s: %w", w.Name, err)
				}
				got[on] = v
			}
			sumOn, sumOff = sumOn+got[true], sumOff+got[false]
			ratios = append(ratios, got[true]/got[false])
		}
		all = append(all, ratios...)
		fmt.Printf("%-20s %10.0f %10.0f %8.3f %8.3f %8d\n", w.Name, sumOn/float64(rounds), sumOff/float64(rounds), geomean(ratios), median(ratios), rounds)
	}
	fmt.Printf("%-20s %10s %10s %8.3f %8.3f %8d\n", "all", "", "", geomean(all), median(all), len(all))
	return nil
}

func geomean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(v)))
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
