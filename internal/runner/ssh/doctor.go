package ssh

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
)

// doctorFileSize is the test file doctor judges a directory's free space
// by: the size of the default suites' files.
const doctorFileSize = 1 << 30

// maxClockSkew is the difference between a host's clock and this one's
// doctor warns about: telemetry and results are stamped with both.
const maxClockSkew = time.Second

// Doctor implements runner.KindDoctor: it checks every host of specs:
// connection (reachability, host key, authentication), sudo where become
// is set, fio and its version, the target path (free space, or the safety
// verdict on a device), and the host's clock; fio versions that differ
// across hosts are called out. Each problem is a check with a fix; hosts
// are checked at once.
func (k Kind) Doctor(ctx context.Context, specs []runner.Spec, _ runner.Options) []result.Check {
	hosts, err := hostSpecs(specs)
	if err != nil {
		return []result.Check{{Area: "ssh", Name: "targets", Status: result.CheckFail, Detail: err.Error(), Fix: "name targets as ssh://[user@]host[:port]/path"}}
	}
	clients, errs, closeAll := k.dial(ctx, hosts)
	defer closeAll()
	per := make([][]result.Check, len(hosts))
	versions := make([]string, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Go(func() { per[i], versions[i] = hostChecks(ctx, h, clients[i], errs[i]) })
	}
	wg.Wait()
	var out []result.Check
	for _, c := range per {
		out = append(out, c...)
	}
	return append(out, fioVersionsCheck(hosts, versions)...)
}

// hostChecks checks one host and returns its fio version ("" when
// unknown).
func hostChecks(ctx context.Context, h HostSpec, c *Client, dialErr error) ([]result.Check, string) {
	area := "ssh " + h.Name
	check := func(name string, st result.CheckStatus, detail, fix string) result.Check {
		return result.Check{Area: area, Name: name, Status: st, Detail: detail, Fix: fix}
	}
	var out []result.Check
	var become *BecomeError
	var unknown *UnknownHostError
	var changed *ChangedHostKeyError
	switch {
	case errors.As(dialErr, &become):
		return append(out, check("connection", result.CheckOK, "authenticated as "+become.User, ""),
			check("sudo", result.CheckFail, become.Error(), "allow passwordless sudo for "+become.User+" ("+become.User+" ALL=("+become.As+") NOPASSWD: ALL in /etc/sudoers.d/storbench), or unset ansible_become")), ""
	case errors.As(dialErr, &unknown):
		return append(out, check("connection", result.CheckFail, dialErr.Error(), "check the fingerprint, then pass "+AcceptNewFlag+" (or ssh to the host once)")), ""
	case errors.As(dialErr, &changed):
		return append(out, check("connection", result.CheckFail, dialErr.Error(), "if the host was reinstalled: ssh-keygen -R the host, then accept the new key")), ""
	case dialErr != nil:
		return append(out, check("connection", result.CheckFail, dialErr.Error(), "check the address, that sshd runs there, the user and that your key is in its authorized_keys")), ""
	}
	out = append(out, check("connection", result.CheckOK, fmt.Sprintf("%s@%s, host key known", c.User(), c.Addr()), ""))
	if as := c.Become(); as != "" {
		out = append(out, check("sudo", result.CheckOK, "commands run as "+as+" through sudo -n", ""))
	}
	version, err := fio.Runner{Cmder: c}.Version(ctx)
	if err != nil {
		out = append(out, check("fio", result.CheckFail, err.Error(), "install fio on the host (Debian/Raspberry Pi OS: apt-get install fio)"))
	} else {
		out = append(out, check("fio", result.CheckOK, version, ""))
		out = append(out, targetCheck(ctx, h, c, check))
	}
	out = append(out, clockCheck(ctx, c, check))
	return out, version
}

// targetCheck judges the target path as a run would: a directory's
// free space and permissions; a device's data, as if --destructive named
// it (the safety owner's verdict on what is on it).
func targetCheck(ctx context.Context, h HostSpec, c *Client, check func(string, result.CheckStatus, string, string) result.Check) result.Check {
	t := NewTarget(h.Name, c, h.Path, TargetOptions{Destructive: []string{h.Name}})
	need := runner.Need{RunID: "doctor", FileSize: doctorFileSize, Writers: []string{"doctor"}}
	if err := t.Check(ctx, need); err != nil {
		fix := "choose another path (--path, storbench_path)"
		switch {
		case strings.Contains(err.Error(), "Permission denied"):
			fix = "log in as a user who may open it, or set ansible_become (--ssh-become for ssh:// targets)"
		case strings.HasPrefix(h.Path, "/dev/"):
			fix = "storbench writes only to devices that hold no data: choose a blank device"
		}
		return check("target "+h.Path, result.CheckFail, err.Error(), fix)
	}
	if strings.HasPrefix(h.Path, "/dev/") {
		return check("target "+h.Path, result.CheckOK, "blank and unused: writable with --destructive "+h.Name, "")
	}
	return check("target "+h.Path, result.CheckOK, "writable, room for a 1 GiB test file", "")
}

// clockCheck compares the host's clock with this one's: in one session
// the host answers each line storbench sends with its time, and of five
// exchanges the quickest is taken, its answer placed at the middle of its
// round trip (as NTP does), so the session's setup does not count.
func clockCheck(ctx context.Context, c *Client, check func(string, result.CheckStatus, string, string) result.Check) result.Check {
	skew, rtt, err := clockSkew(ctx, c)
	if err != nil {
		return check("clock", result.CheckWarn, "reading the host's clock: "+err.Error(), "")
	}
	detail := fmt.Sprintf("%+d ms from this machine's (round trip %.1f ms)", skew.Milliseconds(), float64(rtt)/1e6)
	if math.Abs(float64(skew)) > float64(maxClockSkew) {
		return check("clock", result.CheckWarn, detail, "synchronise the clocks (systemd-timesyncd, chrony): results and telemetry carry both machines' times")
	}
	return check("clock", result.CheckOK, detail, "")
}

// clockSkew is the host's clock minus this one's, and the round trip of
// the exchange it was read in.
func clockSkew(ctx context.Context, c *Client) (skew, rtt time.Duration, err error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := c.Command(ctx, "sh", "-c", `while read -r _; do date +%s.%N; done`).SetStdin(inR).SetStdout(outW).Run()
		outW.CloseWithError(err)
		done <- err
	}()
	defer func() {
		inW.Close()
		<-done
	}()
	lines := bufio.NewReader(outR)
	rtt = time.Duration(math.MaxInt64)
	for range 5 {
		sent := time.Now()
		if _, err := inW.Write([]byte("\n")); err != nil {
			return 0, 0, err
		}
		line, err := lines.ReadString('\n')
		got := time.Now()
		if err != nil {
			return 0, 0, err
		}
		secs, err := strconv.ParseFloat(strings.TrimSpace(line), 64)
		if err != nil {
			return 0, 0, fmt.Errorf("date said %q", line)
		}
		if d := got.Sub(sent); d < rtt {
			rtt = d
			skew = time.Unix(0, int64(secs*1e9)).Sub(sent.Add(d / 2))
		}
	}
	return skew, rtt, nil
}

// fioVersionsCheck calls out fio versions that differ across hosts:
// results across fio versions can differ.
func fioVersionsCheck(hosts []HostSpec, versions []string) []result.Check {
	by := map[string][]string{}
	for i, v := range versions {
		if v != "" {
			by[v] = append(by[v], hosts[i].Name)
		}
	}
	if len(by) < 2 {
		return nil
	}
	var parts []string
	for v, names := range by {
		parts = append(parts, v+" on "+strings.Join(names, ", "))
	}
	sort.Strings(parts)
	return []result.Check{{Area: "ssh", Name: "fio versions", Status: result.CheckWarn, Detail: strings.Join(parts, "; "),
		Fix: "install the same fio version on every host: results across fio versions can differ"}}
}
