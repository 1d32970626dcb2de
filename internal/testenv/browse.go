package testenv

import (
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"testing"
	"time"
)

// Browse opens url (file:// or http://127.0.0.1) in Debian's headless
// Chromium with a fresh profile and nothing that reaches the network, and
// returns its stdout and stderr (where console messages go). args add
// Chromium's own: --dump-dom, --screenshot=FILE, --window-size=W,H.
func Browse(t testing.TB, url string, args ...string) (stdout, stderr string) {
	t.Helper()
	bin := Chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), url)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v %s: %v\n%s", args, url, err, errOut.String())
	}
	return out.String(), errOut.String()
}

var consoleLine = regexp.MustCompile(`(?m)^.*:CONSOLE[:(].*$`)

// ConsoleMessages are the page's console messages in Browse's stderr.
func ConsoleMessages(stderr string) []string { return consoleLine.FindAllString(stderr, -1) }
