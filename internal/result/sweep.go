package result

import (
	"strconv"
	"strings"
)

// The saturation sweep (storbench run --clients) runs one workload on N
// clients at once, for several N. Each step is stored as one ordinary
// result, the clients' aggregate, in round SweepRound(N), so compare and
// trend pair a step with the same step of another run.
const (
	// RoundSweepPrefix starts every sweep round: "sweep-4" is the step
	// with four clients.
	RoundSweepPrefix = "sweep-"
	// LabelClients is the step's client count.
	LabelClients LabelKey = "clients"
	// LabelSweepStartSpread is how far apart, in milliseconds, the clients
	// began their I/O.
	LabelSweepStartSpread LabelKey = "sweep_start_spread_ms"
	// LabelSweepWindow is how long, in milliseconds, every client ran at
	// once: the aggregate's window (from the last to start until the first
	// done).
	LabelSweepWindow LabelKey = "sweep_window_ms"
	// LabelSweepLastDoneIOPS is the aggregate until the last client
	// finished: every client's I/Os over the first start to the last end.
	LabelSweepLastDoneIOPS LabelKey = "sweep_last_done_iops"
	// LabelSweepClientMinIOPS and LabelSweepClientMaxIOPS are the slowest
	// and fastest client's IOPS over the window (fairness).
	LabelSweepClientMinIOPS LabelKey = "sweep_client_min_iops"
	LabelSweepClientMaxIOPS LabelKey = "sweep_client_max_iops"
	// LabelSweepLate names clients that started so late the window lost
	// more than a quarter of the planned runtime; such a step is shown but
	// not used for the knee.
	LabelSweepLate LabelKey = "sweep_late_clients"
	// LabelSweepFailed names the clients that failed; the step's result is
	// failed.
	LabelSweepFailed LabelKey = "sweep_failed_clients"
)

// SweepRound is the round of the sweep step with n clients.
func SweepRound(n int) string { return RoundSweepPrefix + strconv.Itoa(n) }

// SweepClients reads the client count of a sweep round; ok is false for
// any other round.
func SweepClients(round string) (n int, ok bool) {
	s, found := strings.CutPrefix(round, RoundSweepPrefix)
	if !found {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}
