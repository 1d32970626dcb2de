package servecmd_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/app"
	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/cli/clitest"
	"github.com/storbench/storbench/internal/testenv"
)

var binaries testenv.Binaries

func TestMain(m *testing.M) {
	code := m.Run()
	if err := binaries.Remove(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// binary builds cmd/storbench: serve and run are separate processes
// sharing a database, as they are for users.
func binary(t *testing.T) string {
	t.Helper()
	return binaries.Build(t, "github.com/storbench/storbench/cmd/storbench")
}

// Refusals before anything listens: exit 2, saying why.
func TestRefusals(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"all interfaces, no token", []string{"--listen", "0.0.0.0:0"}, "needs --token"},
		{"no host, no token", []string{"--listen", ":0"}, "needs --token"},
		{"a LAN address, no token", []string{"--listen", "192.0.2.1:0"}, "needs --token"},
		{"not HOST:PORT", []string{"--listen", "8080"}, "give HOST:PORT"},
		{"two tokens", []string{"--token", "a", "--token-file", empty}, "not both"},
		{"an empty token file", []string{"--token-file", empty}, "holds no token"},
		{"a missing token file", []string{"--token-file", empty + ".nope"}, "--token-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv := clitest.Run(t, app.Run, db, append([]string{"serve"}, tc.args...)...)
			if inv.Code != cli.ExitUsage || !strings.Contains(inv.Stderr, tc.want) {
				t.Errorf("serve %v: exit %d, stderr %q; want exit 2 saying %q", tc.args, inv.Code, inv.Stderr, tc.want)
			}
		})
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a refused serve touched the database: %v", err)
	}
}

// server is a storbench serve process and its address.
type server struct {
	cmd  *exec.Cmd
	addr string
	line string // what it said at start
}

var listening = regexp.MustCompile(`listening on http://([^/]+)/`)

// startServe starts storbench serve with args and waits for its start
// line.
func startServe(t *testing.T, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			t.Errorf("serve did not stop cleanly on SIGINT: %v", err)
		}
	})
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil {
		t.Fatalf("serve said nothing: %v", err)
	}
	go io.Copy(io.Discard, stderr)
	m := listening.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("serve's start line %q names no address", line)
	}
	return &server{cmd: cmd, addr: m[1], line: line}
}

func fetch(t *testing.T, url string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// The token comes from STORBENCH_TOKEN or a file (never needed on the
// command line), and the start line says it is required.
func TestTokenSources(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		env   []string
		args  []string
		token string
	}{
		{"environment", []string{"STORBENCH_TOKEN=from-env"}, nil, "from-env"},
		{"file", nil, []string{"--token-file", file}, "from-file"},
		{"none on loopback", nil, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServe(t, tc.env, append([]string{"--db", db}, tc.args...)...)
			if want := map[bool]string{true: "bearer token required", false: "no token required"}[tc.token != ""]; !strings.Contains(s.line, want) {
				t.Errorf("start line %q does not say %q", s.line, want)
			}
			code, _ := fetch(t, "http://"+s.addr+"/")
			if tc.token == "" {
				if code != 200 {
					t.Errorf("no token on loopback: %d", code)
				}
				return
			}
			if code != 401 {
				t.Errorf("without the token: %d, want 401", code)
			}
			if code, body := fetch(t, "http://"+s.addr+"/", "Authorization", "Bearer "+tc.token); code != 200 {
				t.Errorf("with the token: %d\n%s", code, body)
			}
		})
	}
}

// Beyond loopback, in a network namespace of the test's own: serve
// refuses to start without a token, and with one answers only requests
// that carry it.
func TestBeyondLoopbackInANetworkNamespace(t *testing.T) {
	testenv.Root(t)
	unshare := testenv.Tool(t, "unshare", "util-linux")
	testenv.Tool(t, "ip", "iproute2")
	testenv.Tool(t, "curl", "curl")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("ns-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := `set -u
ip link set lo up
ip addr add 10.231.0.1/24 dev lo
"$SB" --db "$DIR/results.db" serve --listen 10.231.0.1:18080 >/dev/null 2>"$DIR/refused.err"; echo "refused exit $?"
"$SB" --db "$DIR/results.db" serve --listen 10.231.0.1:18080 --token-file "$DIR/token" 2>"$DIR/serve.err" &
pid=$!
for i in $(seq 50); do grep -q listening "$DIR/serve.err" && break; sleep 0.1; done
echo "without $(curl -s -o /dev/null -w '%{http_code}' http://10.231.0.1:18080/)"
echo "with $(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer ns-token' http://10.231.0.1:18080/)"
kill -INT $pid; wait $pid; echo "stopped $?"
`
	cmd := exec.Command(unshare, "--net", "sh", "-c", script)
	cmd.Env = append(os.Environ(), "SB="+binary(t), "DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	refused, _ := os.ReadFile(filepath.Join(dir, "refused.err"))
	started, _ := os.ReadFile(filepath.Join(dir, "serve.err"))
	for _, want := range []string{"refused exit 2", "without 401", "with 200", "stopped 0"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in:\n%s\nrefused: %s\nserve: %s", want, out, refused, started)
		}
	}
	if !strings.Contains(string(refused), "needs --token") || !strings.Contains(string(started), "10.231.0.1:18080/ (bearer token required)") {
		t.Errorf("what serve said: refused %q, started %q", refused, started)
	}
}

// storbench serve beside a real storbench run writing the same database:
// the run appears while it runs, follows its results, and turns complete;
// neither process ever sees "database is locked".
func TestServeWhileARunWrites(t *testing.T) {
	testenv.Fio(t)
	db := filepath.Join(t.TempDir(), "results.db")
	s := startServe(t, nil, "--db", db) // before the database exists
	base := "http://" + s.addr

	run := exec.Command(s.cmd.Path, "--db", db, "run", "--suite", "testdata/live.yaml", "--target", t.TempDir(), "--output", "json")
	var runOut, runErr strings.Builder
	run.Stdout, run.Stderr = &runOut, &runErr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- run.Wait() }()

	type seen struct {
		status  string
		results int
	}
	var history []seen
	var runID string
	row := regexp.MustCompile(`<tr data-run="([^"]+)">`)
	check := func(code int, body, what string) {
		t.Helper()
		if strings.Contains(body, "locked") || strings.Contains(body, "SQLITE_BUSY") {
			t.Fatalf("%s: %s", what, body)
		}
		if code != 200 {
			t.Fatalf("%s: %d\n%s", what, code, body)
		}
	}
	finished := false
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		code, body := fetch(t, base+"/")
		check(code, body, "runs list")
		if m := row.FindStringSubmatch(body); m != nil && runID == "" {
			runID = m[1]
		}
		if runID != "" {
			code, body := fetch(t, base+"/runs/"+runID+"/status.json")
			check(code, body, "status")
			var st struct {
				Status  string `json:"status"`
				Results int    `json:"results"`
			}
			if err := json.Unmarshal([]byte(body), &st); err != nil {
				t.Fatalf("status %q: %v", body, err)
			}
			if len(history) == 0 || history[len(history)-1] != (seen{st.Status, st.Results}) {
				history = append(history, seen{st.Status, st.Results})
			}
			code, body = fetch(t, base+"/runs/"+runID)
			check(code, body, "run page")
		}
		if finished {
			break
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("storbench run: %v\n%s", err, runErr.String())
			}
			finished = true // one more look after the end
		case <-time.After(150 * time.Millisecond):
		}
	}
	if !finished {
		t.Fatal("the run did not finish in 2 minutes")
	}
	if strings.Contains(runErr.String(), "locked") {
		t.Errorf("the run saw a locked database:\n%s", runErr.String())
	}
	t.Logf("run %s as the dashboard saw it: %v", runID, history)
	if len(history) < 3 || history[0].status != "running" || history[len(history)-1] != (seen{"complete", 4}) {
		t.Errorf("the dashboard saw %v; want the run running, its results appearing, then complete with 4", history)
	}
	for _, h := range history {
		if h.status == "running" && h.results > 0 && h.results < 4 {
			return
		}
	}
	t.Errorf("never saw the run part way (running with some results): %v", history)
}

// A real Prometheus server scrapes storbench serve's /metrics with the
// bearer token read from a file, as docs/dashboard.md tells: the scrape
// is up and the stored figures are there; without the token it is down.
func TestPrometheusScrapesServe(t *testing.T) {
	prom := testenv.Tool(t, "prometheus", "prometheus")
	dir := t.TempDir()
	db := filepath.Join(dir, "results.db")
	if inv := clitest.Run(t, app.Run, db, "import", "../../importer/testdata/fio-randread-4k-qd32.json"); inv.Code != 0 {
		t.Fatalf("import: %d %s", inv.Code, inv.Stderr)
	}
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("scrape-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, nil, "--db", db, "--token-file", token)
	promAddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	config := fmt.Sprintf(`global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: with-token
    authorization: {credentials_file: %q}
    static_configs: [{targets: [%q]}]
  - job_name: without-token
    static_configs: [{targets: [%q]}]
`, token, s.addr, s.addr)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	var logs strings.Builder
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	// value asks Prometheus for one instant vector's values.
	value := func(q string) []string {
		resp, err := http.Get("http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return nil // not up yet
		}
		defer resp.Body.Close()
		var body struct {
			Data struct {
				Result []struct {
					Value [2]any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if json.NewDecoder(resp.Body).Decode(&body) != nil {
			return nil
		}
		var out []string
		for _, r := range body.Data.Result {
			out = append(out, fmt.Sprint(r.Value[1]))
		}
		return out
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		with, without := value(`up{job="with-token"}`), value(`up{job="without-token"}`)
		iops := value(`storbench_iops{job="with-token"}`)
		if len(with) == 1 && len(without) == 1 && len(iops) > 0 {
			if with[0] != "1" || without[0] != "0" {
				t.Fatalf("up: with the token %v, without %v; want 1 and 0", with, without)
			}
			if v, err := strconv.ParseFloat(iops[0], 64); err != nil || v < 1000 {
				t.Errorf("storbench_iops = %v", iops)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no scrape within 90 s: up %v/%v, iops %v\n%s", with, without, iops, logs.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
}
