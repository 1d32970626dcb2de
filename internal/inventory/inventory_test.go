package inventory

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/golden"
)

// TestGolden resolves every inventory in testdata/ for a set of patterns
// and compares the hosts, as JSON, with testdata/NAME.golden.json.
func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		file     string
		patterns []string
	}{
		{"k3s-ansible.yml", []string{"all", "k3s_cluster", "agent", "server:nas", "all:!nas", "k3s_cluster:&agent:!pi-agent2.lan", "pi-agent*", "~pi-agent[13]"}},
		{"turing-pi.ini", []string{"all", "cluster", "storage", "nodes:!storage", "cluster:&storage", "control_plane,storage"}},
		{"pi-rack.ini", []string{"all", "ungrouped", "pis", "pi4", "pi5", "ceph_osd", "pis:!ceph_osd", "!pis", "&pi4", "pi5-[ab]:bench1.lan"}},
		{"priority.yml", []string{"all", "rack", "shelf_a:zone_b"}},
		{"k3s-classic/hosts.ini", []string{"all", "node:!192.168.1.37"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			inv, err := Load(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			type selection struct {
				Pattern string `json:"pattern"`
				Hosts   []Host `json:"hosts"`
			}
			var got []selection
			for _, p := range tc.patterns {
				hosts, err := inv.Select(p)
				if err != nil {
					t.Fatalf("Select(%q): %v", p, err)
				}
				got = append(got, selection{p, hosts})
			}
			data, err := json.MarshalIndent(got, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			data = append(data, '\n')
			golden.Compare(t, filepath.Join("testdata", strings.TrimSuffix(tc.file, filepath.Ext(tc.file))+".golden.json"), data)
		})
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestResolvedFields pins the precedence rules the goldens show, so a
// golden refreshed by mistake cannot hide a change in them.
func TestResolvedFields(t *testing.T) {
	for _, tc := range []struct {
		file, host string
		want       Host
	}{
		// Group vars of pis, overridden by pi5's user, then the host's own.
		{"pi-rack.ini", "pi5-c", Host{Address: "10.0.0.23", Port: 2222, User: "pi5user", Become: true, Path: "/mnt/nvme0"}},
		// ceph_osd and pis are both children of all (depth 1): pis sorts
		// after ceph_osd by name, so its variables win, as in Ansible.
		{"pi-rack.ini", "pi4-03", Host{Address: "pi4-03", Port: 2222, User: "ubuntu", Become: true, Path: "/var/tmp/storbench"}},
		{"pi-rack.ini", "pi4-01", Host{Address: "pi4-01", Port: 2222, User: "ubuntu", Become: true, Path: "/var/tmp/storbench"}},
		{"pi-rack.ini", "bench2.lan", Host{Address: "bench2.lan", Port: 2200}},
		{"pi-rack.ini", "localhost", Host{Address: "localhost", Connection: "local", Path: "/var/tmp/storbench"}},
		// The group's port, then the host's own.
		{"k3s-ansible.yml", "pi-agent4.lan", Host{Address: "192.168.1.34", Port: 2222, User: "pi", Become: true, Path: "/mnt/usb-ssd/bench"}},
		{"k3s-ansible.yml", "nas.lan", Host{Address: "nas.lan", User: "admin", KeyFile: "~/.ssh/nas_ed25519", Path: "/srv/tank/bench"}},
		// ansible_group_priority lifts shelf_b over shelf_a.
		{"priority.yml", "n1", Host{Address: "n1", Port: 2201, User: "from-all", Path: "/from/shelf_b"}},
		{"priority.yml", "n2", Host{Address: "n2", Port: 2201, User: "from-all", Path: "/from/host"}},
		{"priority.yml", "n3", Host{Address: "n3", User: "from-all", Become: true, Path: "/from/all"}},
		// group_vars/all beats the file's [k3s_cluster:vars]; group_vars/node/
		// and host_vars/ beat both.
		{"k3s-classic/hosts.ini", "192.168.1.35", Host{Address: "192.168.1.35", User: "pi", Path: "/var/tmp/storbench"}},
		{"k3s-classic/hosts.ini", "192.168.1.36", Host{Address: "192.168.1.36", User: "pi", Become: true, Path: "/mnt/ssd/storbench"}},
		{"k3s-classic/hosts.ini", "192.168.1.38", Host{Address: "192.168.1.38", Port: 2222, User: "pi", Become: true, Path: "/mnt/nvme/storbench"}},
		{"turing-pi.ini", "turing-node-3.local", Host{Address: "turing-node-3.local", User: "pi", KeyFile: "~/.ssh/turing_ed25519", Become: true, Path: "/mnt/nvme/bench"}},
	} {
		t.Run(tc.file+"/"+tc.host, func(t *testing.T) {
			inv, err := Load(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			h, err := inv.Resolve(tc.host)
			if err != nil {
				t.Fatal(err)
			}
			got := Host{Address: h.Address, Port: h.Port, User: h.User, KeyFile: h.KeyFile, Become: h.Become, Path: h.Path, Connection: h.Connection}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("resolved\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestPatterns(t *testing.T) {
	inv, err := Load(filepath.Join("testdata", "pi-rack.ini"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		pattern string
		want    string // host names, space-separated
		err     string
	}{
		{"all", "bench1.lan bench2.lan localhost pi4-01 pi4-02 pi4-03 pi4-04 pi5-a pi5-b pi5-c", ""},
		{"*", "bench1.lan bench2.lan localhost pi4-01 pi4-02 pi4-03 pi4-04 pi5-a pi5-b pi5-c", ""},
		{"pi5:pi4", "pi5-a pi5-b pi5-c pi4-01 pi4-02 pi4-03 pi4-04", ""},
		{"pis:&ceph_osd", "pi4-03 pi5-c", ""},
		// Ansible applies ! after & after the plain terms, whatever the order.
		{"!pi4:pis", "pi5-a pi5-b pi5-c", ""},
		{"&ceph_osd:!pi5-c:pis", "pi4-03", ""},
		{"pis,!pi4", "pi5-a pi5-b pi5-c", ""},
		{"!pis", "bench1.lan bench2.lan localhost", ""},
		{"pi5-[ab]", "pi5-a pi5-b", ""},
		{"pi4[1-2]", "pi4-02 pi4-03", ""},
		{"pi4-0[23]", "", `"pi4-0" matches no group or host`},
		{"pi?-c", "pi5-c", ""},
		{"~pi4-0[14]", "pi4-01 pi4-04", ""},
		{"pi5-b", "pi5-b", ""},
		{"pi4[0]", "pi4-01", ""},
		{"pi4[-1]", "pi4-04", ""},
		{"pis[1:3]", "pi4-02 pi4-03 pi4-04", ""},
		{"pis[5:]:bench1.lan", "pi5-b pi5-c bench1.lan", ""},
		{"pis:!pis[0:5]", "pi5-c", ""},
		{"pi4[4]", "", `"pi4" has 4 hosts, no host 4`},
		{"pi4[3:1]", "", "none in [3:1]"},
		{"pis:!pis", "", `selects no host`},
		{"pis:!pi6", "", `"pi6" matches no group or host`},
		{"nosuch", "", `"nosuch" matches no group or host in testdata/pi-rack.ini`},
		{"", "", "empty"},
		{"~pi[", "", "invalid regular expression"},
	} {
		t.Run(tc.pattern, func(t *testing.T) {
			got, err := inv.Match(tc.pattern)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Match(%q) = %v, %v; want error containing %q", tc.pattern, got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := strings.Join(got, " "); s != tc.want {
				t.Errorf("Match(%q)\n got %s\nwant %s", tc.pattern, s, tc.want)
			}
		})
	}
}

func TestExpandRange(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"pi[01:04]", "pi01 pi02 pi03 pi04", ""},
		{"pi[1:3].lan", "pi1.lan pi2.lan pi3.lan", ""},
		{"n[a:c]", "na nb nc", ""},
		{"n[0:10:5]", "n0 n5 n10", ""},
		{"r[1:2]s[a:b]", "r1sa r1sb r2sa r2sb", ""},
		{"[:2]x", "0x 1x 2x", ""},
		{"plain", "plain", ""},
		{"pi[01:4]", "", "equal length"},
		{"pi[4:1]", "", "begins after it ends"},
		{"pi[1:]", "", "no end"},
		{"pi[1:a]", "", "from one letter to another"},
		{"pi[1:3", "", "unbalanced"},
		{"pi[1]", "", "[begin:end]"},
	} {
		got, err := expandRange(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("expandRange(%q) = %v, %v; want error containing %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("expandRange(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

func TestSplitHostPort(t *testing.T) {
	for _, tc := range []struct{ in, host, port, err string }{
		{"pi01", "pi01", "", ""},
		{"pi01:2222", "pi01", "2222", ""},
		{"pi[01:04]:2222", "pi[01:04]", "2222", ""},
		{"pi[01:04]", "pi[01:04]", "", ""},
		{"fe80::1", "fe80::1", "", ""},
		{"[fe80::1]:22", "fe80::1", "22", ""},
		{"pi01:", "", "", "no port"},
		{"pi01:ssh", "", "", "not a port number"},
		{"pi01:70000", "", "", "not a port number"},
	} {
		h, p, err := splitHostPort(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("splitHostPort(%q) = %q %q %v; want error containing %q", tc.in, h, p, err, tc.err)
			}
			continue
		}
		if err != nil || h != tc.host || p != tc.port {
			t.Errorf("splitHostPort(%q) = %q %q %v; want %q %q", tc.in, h, p, err, tc.host, tc.port)
		}
	}
}

func TestINIValues(t *testing.T) {
	inv, err := ParseINI([]byte(`h1 a=2222 b='x y' c="q\"uote" d=True e=0755 f=1.5 g=None h=x#comment
[g]
h2
[g:vars]
s = "quoted"   # a comment
n = 42 # the answer
raw = some words # kept as written
`), "values.ini")
	if err != nil {
		t.Fatal(err)
	}
	h, err := inv.Resolve("h1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": 2222, "b": "x y", "c": `q"uote`, "d": true, "e": "0755", "f": 1.5, "g": nil, "h": "x"}
	for k, v := range want {
		if got := h.Vars[k]; !reflect.DeepEqual(got, v) {
			t.Errorf("host var %s = %#v, want %#v", k, got, v)
		}
	}
	g, _ := inv.Group("g")
	for k, v := range map[string]any{"s": "quoted", "n": 42, "raw": "some words # kept as written"} {
		if got := g.Vars[k].V; !reflect.DeepEqual(got, v) {
			t.Errorf("group var %s = %#v, want %#v", k, got, v)
		}
	}
}

// TestErrors feeds broken inventories; each error must say file and line.
func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file, content, want string
	}{
		{"unknown section type", "a.ini", "[g:things]\nh1\n", "a.ini:1: section [g:things] has unknown type"},
		{"undefined child", "a.ini", "[p]\nh1\n\n[p:children]\nmissing\n", `a.ini:5: section [p:children] includes undefined group "missing"`},
		{"vars of undefined group", "a.ini", "h1\n[ghost:vars]\nx=1\n", "a.ini:2: section [ghost:vars] is for a group that is never declared"},
		{"spaces in section", "a.ini", "[my group]\nh1\n", "a.ini:1: invalid section [my group]"},
		{"var without equals", "a.ini", "[g]\nh1 ansible_user\n", `a.ini:2: expected key=value host variable after "h1", got "ansible_user"`},
		{"vars line without equals", "a.ini", "[g]\nh1\n[g:vars]\njustaword\n", "a.ini:4: expected key=value in [g:vars]"},
		{"bad port in pattern", "a.ini", "\n\nh1:ssh\n", `a.ini:3: host "h1:ssh": "ssh" is not a port number`},
		{"bad range", "a.ini", "[g]\npi[04:01]\n", "a.ini:2: host \"pi[04:01]\": range begins after it ends"},
		{"unclosed quote", "a.ini", "h1 a='x\n", "a.ini:1: no closing quotation"},
		{"yaml document in ini", "a.ini", "---\n", "a.ini:1: host \"---\": '---' starts a YAML document"},
		{"cycle", "a.ini", "[a:children]\nb\n[b:children]\na\n", "is its own ancestor"},
		{"bad port var", "a.ini", "[g]\nh1\n[g:vars]\nansible_port=twenty\n", `a.ini:4: host "h1": ansible_port "twenty" is not a port number`},
		{"bad become", "a.ini", "h1 ansible_become=maybe\n", `a.ini:1: host "h1": ansible_become "maybe" is not a boolean`},
		{"template", "a.yml", "all:\n  hosts:\n    h1:\n      ansible_host: \"{{ lookup('env', 'IP') }}\"\n", `a.yml:4: host "h1": ansible_host is a template`},
		{"yaml hosts as list", "a.yml", "web:\n  hosts:\n    - h1\n", "a.yml:3: group \"web\": hosts must be a mapping, found a list"},
		{"yaml unknown key", "a.yml", "web:\n  host:\n    h1:\n", `a.yml:2: group "web": unexpected key "host"`},
		{"yaml group is a list", "a.yml", "web:\n  - h1\n", `a.yml:2: group "web" must be a mapping`},
		{"yaml top-level list", "a.yml", "- h1\n", "a.yml:1: expected a mapping of groups"},
		{"yaml plugin config", "a.yml", "plugin: aws_ec2\nregions: [eu-west-1]\n", "a.yml:1: this is the configuration of an inventory plugin"},
		{"yaml syntax", "a.yml", "all:\n  hosts: [\n", "a.yml: not valid YAML"},
		{"yaml host vars a list", "a.yml", "all:\n  hosts:\n    h1: [a]\n", `a.yml:3: host "h1": its variables must be a mapping`},
		{"yaml bad range", "a.yml", "all:\n  hosts:\n    pi[3:1]:\n", `a.yml:3: host "pi[3:1]": range begins after it ends`},
		{"yaml self child", "a.yml", "g:\n  children:\n    g:\n", `group "g" lists itself as a child`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.file)
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			inv, err := Load(path)
			if err == nil {
				_, err = inv.Select("all")
			}
			if err == nil {
				t.Fatalf("no error; want %q", tc.want)
			}
			msg := strings.ReplaceAll(err.Error(), filepath.Dir(path)+string(filepath.Separator), "")
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error\n %s\ndoes not contain\n %s", msg, tc.want)
			}
			var ie *Error
			if !errors.As(err, &ie) && !strings.Contains(tc.name, "syntax") {
				t.Errorf("error is a %T, not an *inventory.Error with a position", err)
			}
		})
	}
}

func TestVaultFilesSkipped(t *testing.T) {
	inv, err := Load(filepath.Join("testdata", "k3s-classic", "hosts.ini"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Skipped) != 1 || !strings.Contains(inv.Skipped[0], "vault.yml: encrypted with ansible-vault") {
		t.Errorf("Skipped = %q, want the vault file", inv.Skipped)
	}
}

func TestVarsFileErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hosts"), []byte("[pis]\npi1\n"), 0o644)
	os.Mkdir(filepath.Join(dir, "group_vars"), 0o755)
	os.WriteFile(filepath.Join(dir, "group_vars", "pis.yml"), []byte("# comment\n- a\n- b\n"), 0o644)
	_, err := Load(filepath.Join(dir, "hosts"))
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "group_vars", "pis.yml")+`:2: variables of "pis" must be a mapping`) {
		t.Errorf("a list in group_vars: %v", err)
	}
}

func TestFormatDetection(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		yaml          bool
	}{
		{"hosts", "# comment\n\nall:\n  hosts:\n", true},
		{"hosts", "---\nall:\n", true},
		{"hosts", "[pis]\npi1\n", false},
		{"hosts", "pi1 ansible_host=1.2.3.4\n", false},
		{"hosts", "pi1:2222\n", false},
		{"hosts.yml", "pi1\n", true},
		{"hosts.ini", "all:\n", false},
	} {
		if got := isYAML(tc.name, []byte(tc.content)); got != tc.yaml {
			t.Errorf("isYAML(%q, %q) = %v, want %v", tc.name, tc.content, got, tc.yaml)
		}
	}
}
