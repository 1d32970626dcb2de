// Package inventory reads Ansible inventories (the INI and YAML formats of
// Ansible's ini and yaml inventory plugins) and resolves, per host, what
// storbench needs to reach it over SSH: address, port, user, key file,
// become, and the storbench_path variable.
//
// Variables are resolved as Ansible does for inventory variables: the
// variables of every group a host belongs to (directly or through
// children) are combined from the shallowest group to the deepest (all
// first, then parents, then their children; ansible_group_priority and
// then the group name order groups of equal depth), and the host's own
// variables override them all. Templates ("{{ ... }}") are not evaluated:
// a connection variable holding one is an error.
package inventory

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/inputfile"
)

// Position is where something was written: file and 1-based line.
type Position struct {
	File string
	Line int
}

func (p Position) String() string {
	if p.Line <= 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
}

// Error is a problem in an inventory, at a position in it.
type Error struct {
	Pos Position
	Msg string
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

func errorf(pos Position, format string, args ...any) error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// Value is one variable as written, with where it was set.
type Value struct {
	V   any // string, int, float64, bool, nil, or a YAML list/map
	Pos Position
}

// Group is an Ansible group. Every group is a descendant of "all".
type Group struct {
	Name     string
	Vars     map[string]Value
	Hosts    []string // direct members, in order of appearance
	Children []string // in order of appearance
	Parents  []string
	Pos      Position // where the group was first declared
}

// hostEntry is a host as declared: its own variables and groups.
type hostEntry struct {
	name   string
	vars   map[string]Value
	groups []string // direct groups, in order of appearance
	pos    Position
	order  int
}

// Inventory is a parsed inventory file.
type Inventory struct {
	// File is the path the inventory was read from, as given.
	File   string
	groups map[string]*Group
	order  []string // group names in order of appearance
	hosts  map[string]*hostEntry
	hostOr []string // host names in order of appearance

	// groupFiles and hostFiles are the variables of group_vars/ and
	// host_vars/ beside the inventory file.
	groupFiles map[string]map[string]Value
	hostFiles  map[string]map[string]Value
	// Skipped lists files of group_vars/ and host_vars/ that were not read,
	// with why (ansible-vault encrypted files).
	Skipped []string
}

// Load reads an inventory file, and the group_vars/ and host_vars/
// directories beside it as Ansible does. The format is YAML when the name
// ends in .yml, .yaml or .json, or when the content does not look like INI
// (a first meaningful line that is neither a [section] nor a host line);
// INI otherwise.
func Load(path string) (*Inventory, error) {
	data, err := inputfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("reading inventory: %w", err)
	}
	var inv *Inventory
	if isYAML(path, data) {
		inv, err = ParseYAML(data, path)
	} else {
		inv, err = ParseINI(data, path)
	}
	if err != nil {
		return nil, err
	}
	if err := inv.loadVarsDirs(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return inv, nil
}

func isYAML(path string, data []byte) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yml", ".yaml", ".json":
		return true
	case ".ini", ".cfg":
		return false
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line == "---" || line[0] == '{' {
			return true
		}
		// "group:" or "all:" ending a line is YAML's mapping; an INI host
		// line ends in a port number or a variable.
		return strings.HasSuffix(strings.Fields(line)[0], ":") && !strings.HasPrefix(line, "[")
	}
	return false
}

func newInventory(file string) *Inventory {
	inv := &Inventory{File: file, groups: map[string]*Group{}, hosts: map[string]*hostEntry{}}
	inv.addGroup("all", Position{File: file})
	inv.addGroup("ungrouped", Position{File: file})
	inv.addChild("all", "ungrouped")
	return inv
}

func (inv *Inventory) addGroup(name string, pos Position) *Group {
	if g, ok := inv.groups[name]; ok {
		return g
	}
	g := &Group{Name: name, Vars: map[string]Value{}, Pos: pos}
	inv.groups[name] = g
	inv.order = append(inv.order, name)
	return g
}

func (inv *Inventory) addChild(parent, child string) {
	p, c := inv.groups[parent], inv.groups[child]
	for _, n := range p.Children {
		if n == child {
			return
		}
	}
	p.Children = append(p.Children, child)
	c.Parents = append(c.Parents, parent)
}

// addHost adds name to group (creating the host when new) and sets vars on
// the host; later settings override earlier ones as in Ansible.
func (inv *Inventory) addHost(name, group string, port *Value, vars map[string]Value, pos Position) {
	h, ok := inv.hosts[name]
	if !ok {
		h = &hostEntry{name: name, vars: map[string]Value{}, pos: pos, order: len(inv.hostOr)}
		inv.hosts[name] = h
		inv.hostOr = append(inv.hostOr, name)
	}
	if group != "" {
		g := inv.groups[group]
		if !slices.Contains(g.Hosts, name) {
			g.Hosts = append(g.Hosts, name)
			h.groups = append(h.groups, group)
		}
	}
	if port != nil {
		h.vars["ansible_port"] = *port
	}
	for k, v := range vars {
		h.vars[k] = v
	}
}

// addHostEntry adds the hosts of one entry as written ("pi[01:04]:2222")
// to group, each with vars.
func (inv *Inventory) addHostEntry(entry, group string, vars map[string]Value, pos Position) error {
	pattern, port, err := splitHostPort(entry)
	if err != nil {
		return errorf(pos, "%v", err)
	}
	names, err := expandRange(pattern)
	if err != nil {
		return errorf(pos, "%v", err)
	}
	var portVal *Value
	if port != "" {
		n, _ := strconv.Atoi(port) // checked by splitHostPort
		portVal = &Value{V: n, Pos: pos}
	}
	for _, n := range names {
		inv.addHost(n, group, portVal, vars, pos)
	}
	return nil
}

// finish applies Ansible's reconciliation: a group with no parent is a
// child of all; a host in no group but all (or ungrouped) is in ungrouped,
// and leaves ungrouped once it is in another group. It refuses cycles.
func (inv *Inventory) finish() error {
	for _, name := range inv.order {
		if name != "all" && len(inv.groups[name].Parents) == 0 {
			inv.addChild("all", name)
		}
	}
	ungrouped := inv.groups["ungrouped"]
	var keep []string
	for _, name := range inv.hostOr {
		h := inv.hosts[name]
		var others []string
		for _, g := range h.groups {
			if g != "all" && g != "ungrouped" {
				others = append(others, g)
			}
		}
		if len(others) == 0 {
			keep = append(keep, name)
			h.groups = []string{"ungrouped"}
		} else {
			h.groups = others
		}
	}
	ungrouped.Hosts = keep
	inv.groups["all"].Hosts = nil
	for _, name := range inv.order {
		if err := inv.checkCycle(name, nil); err != nil {
			return err
		}
	}
	return nil
}

func (inv *Inventory) checkCycle(name string, path []string) error {
	if slices.Contains(path, name) {
		return errorf(inv.groups[name].Pos, "group %q is its own ancestor: %s", name, strings.Join(append(path, name), " -> "))
	}
	for _, c := range inv.groups[name].Children {
		if err := inv.checkCycle(c, append(path, name)); err != nil {
			return err
		}
	}
	return nil
}

// depth is a group's distance from all along its longest parent chain,
// as Ansible computes it.
func (inv *Inventory) depth(name string) int {
	d := 0
	for _, p := range inv.groups[name].Parents {
		if pd := inv.depth(p) + 1; pd > d {
			d = pd
		}
	}
	return d
}

// ancestors returns the groups a host belongs to, directly or through
// children, including all.
func (inv *Inventory) hostGroups(h *hostEntry) []string {
	seen := map[string]bool{}
	var out []string
	var walk func(string)
	walk = func(g string) {
		if seen[g] {
			return
		}
		seen[g] = true
		out = append(out, g)
		for _, p := range inv.groups[g].Parents {
			walk(p)
		}
	}
	for _, g := range h.groups {
		walk(g)
	}
	walk("all")
	return out
}

// Groups lists the group names in order of appearance, all and ungrouped
// first.
func (inv *Inventory) Groups() []string { return append([]string(nil), inv.order...) }

// Group returns a group by name.
func (inv *Inventory) Group(name string) (*Group, bool) {
	g, ok := inv.groups[name]
	return g, ok
}

// Host is one inventory host as storbench reaches it.
type Host struct {
	// Name is the inventory name (Ansible's inventory_hostname).
	Name string `json:"name"`
	// Address is ansible_host, or Name when unset.
	Address string `json:"address"`
	// Port is ansible_port; 0 when unset (SSH config or 22 decide).
	Port int `json:"port,omitempty"`
	// User is ansible_user; "" when unset (SSH config or the local user).
	User string `json:"user,omitempty"`
	// KeyFile is ansible_ssh_private_key_file ("~" not expanded).
	KeyFile string `json:"key_file,omitempty"`
	// Become is ansible_become: run privileged commands through sudo.
	Become bool `json:"become,omitempty"`
	// BecomeUser is ansible_become_user: the user sudo runs commands as
	// ("" is root).
	BecomeUser string `json:"become_user,omitempty"`
	// BecomeMethod is ansible_become_method ("" is sudo).
	BecomeMethod string `json:"become_method,omitempty"`
	// SSHArgs are ansible_ssh_common_args then ansible_ssh_extra_args, as
	// written (ssh command-line options).
	SSHArgs string `json:"ssh_args,omitempty"`
	// Connection is ansible_connection: "ssh" when unset; "local" means
	// this host itself (no SSH).
	Connection string `json:"connection,omitempty"`
	// Path is storbench_path: where to measure on this host.
	Path string `json:"path,omitempty"`
	// Groups are the groups the host is in, directly or through
	// children, sorted, without all (Ansible's group_names).
	Groups []string `json:"groups"`
	// Vars are every resolved variable of the host.
	Vars map[string]any `json:"vars,omitempty"`
}

// Names of the variables storbench reads, with Ansible's older spellings
// (first wins when both are set at the same level).
var (
	varHost   = []string{"ansible_host", "ansible_ssh_host"}
	varPort   = []string{"ansible_port", "ansible_ssh_port"}
	varUser   = []string{"ansible_user", "ansible_ssh_user"}
	varKey    = []string{"ansible_ssh_private_key_file", "ansible_private_key_file"}
	varBecome = []string{"ansible_become"}
	varBUser  = []string{"ansible_become_user"}
	varBMeth  = []string{"ansible_become_method"}
	varCommon = []string{"ansible_ssh_common_args"}
	varExtra  = []string{"ansible_ssh_extra_args"}
	varPath   = []string{"storbench_path"}
	varConn   = []string{"ansible_connection"}
)

// Resolve returns a host with its variables resolved.
func (inv *Inventory) Resolve(name string) (Host, error) {
	h, ok := inv.hosts[name]
	if !ok {
		return Host{}, fmt.Errorf("%s: no host %q in the inventory", inv.File, name)
	}
	groups, err := inv.orderedGroups(h)
	if err != nil {
		return Host{}, err
	}
	// Ansible's default VARIABLE_PRECEDENCE: the inventory's group vars,
	// then group_vars/all, then group_vars/<group>, then the host's own
	// vars, then host_vars/<host>.
	vars := map[string]Value{}
	merge := func(m map[string]Value) {
		for k, v := range m {
			vars[k] = v
		}
	}
	for _, g := range groups {
		merge(inv.groups[g].Vars)
	}
	for _, g := range groups {
		merge(inv.groupFiles[g])
	}
	merge(h.vars)
	merge(inv.hostFiles[name])

	out := Host{Name: name, Address: name, Vars: map[string]any{}}
	for k, v := range vars {
		out.Vars[k] = v.V
	}
	for _, g := range groups {
		if g != "all" {
			out.Groups = append(out.Groups, g)
		}
	}
	sort.Strings(out.Groups)

	str := func(names []string, dst *string) error {
		v, ok := lookup(vars, names)
		if !ok || v.V == nil {
			return nil
		}
		s := fmt.Sprint(v.V)
		if strings.Contains(s, "{{") || strings.Contains(s, "{%") {
			return errorf(v.Pos, "host %q: %s is a template (%q); storbench does not evaluate Jinja templates, set the value itself", name, names[0], s)
		}
		*dst = s
		return nil
	}
	for _, f := range []struct {
		names []string
		dst   *string
	}{{varHost, &out.Address}, {varUser, &out.User}, {varKey, &out.KeyFile}, {varPath, &out.Path}, {varConn, &out.Connection},
		{varBUser, &out.BecomeUser}, {varBMeth, &out.BecomeMethod}} {
		if err := str(f.names, f.dst); err != nil {
			return Host{}, err
		}
	}
	var common, extra string
	if err := str(varCommon, &common); err != nil {
		return Host{}, err
	}
	if err := str(varExtra, &extra); err != nil {
		return Host{}, err
	}
	out.SSHArgs = strings.TrimSpace(common + " " + extra)
	if v, ok := lookup(vars, varPort); ok && v.V != nil {
		n, err := toInt(v.V)
		if err != nil || n < 1 || n > 65535 {
			return Host{}, errorf(v.Pos, "host %q: ansible_port %q is not a port number", name, fmt.Sprint(v.V))
		}
		out.Port = n
	}
	if v, ok := lookup(vars, varBecome); ok && v.V != nil {
		b, err := toBool(v.V)
		if err != nil {
			return Host{}, errorf(v.Pos, "host %q: ansible_become %q is not a boolean (true/false, yes/no)", name, fmt.Sprint(v.V))
		}
		out.Become = b
	}
	return out, nil
}

// orderedGroups are a host's groups in the order Ansible applies their
// variables: by depth (all first), then ansible_group_priority, then name.
func (inv *Inventory) orderedGroups(h *hostEntry) ([]string, error) {
	groups := inv.hostGroups(h)
	depth := map[string]int{}
	prio := map[string]int{}
	for _, g := range groups {
		depth[g] = inv.depth(g)
		prio[g] = 1
		if v, ok := inv.groups[g].Vars["ansible_group_priority"]; ok {
			n, err := toInt(v.V)
			if err != nil {
				return nil, errorf(v.Pos, "group %q: ansible_group_priority %v is not a number", g, v.V)
			}
			prio[g] = n
		}
	}
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		if depth[a] != depth[b] {
			return depth[a] < depth[b]
		}
		if prio[a] != prio[b] {
			return prio[a] < prio[b]
		}
		return a < b
	})
	return groups, nil
}

// lookup finds the first of names set (aliases in preference order).
func lookup(vars map[string]Value, names []string) (Value, bool) {
	for _, n := range names {
		if v, ok := vars[n]; ok {
			return v, true
		}
	}
	return Value{}, false
}

func toInt(v any) (int, error) {
	switch x := v.(type) {
	case int:
		return x, nil
	case string:
		return strconv.Atoi(strings.TrimSpace(x))
	}
	return 0, fmt.Errorf("not an integer: %v", v)
}

// toBool follows Ansible's boolean filter: yes/on/true/1/y/t and
// no/off/false/0/n/f, in any case.
func toBool(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case int:
		if x == 0 || x == 1 {
			return x == 1, nil
		}
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "yes", "on", "true", "1", "y", "t":
			return true, nil
		case "no", "off", "false", "0", "n", "f", "":
			return false, nil
		}
	}
	return false, errors.New("not a boolean")
}
