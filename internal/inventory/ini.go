package inventory

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var (
	iniSection   = regexp.MustCompile(`^\[([^:\]\s]+)(?::(\w+))?\]\s*(?:[#;].*)?$`)
	iniGroupName = regexp.MustCompile(`^([^:\]\s]+)\s*(?:[#;].*)?$`)
)

// pendingDecl is a group named before it is declared: as a child in a
// [x:children] section, or by a [x:vars] section.
type pendingDecl struct {
	state   string // "children" or "vars"
	pos     Position
	parents []string
}

// ParseINI reads an inventory in the format of Ansible's ini plugin. file
// names the source in errors.
//
// As in Ansible: hosts before any section are ungrouped; [g:children] may
// name groups declared further down, but a group never declared is an
// error; [g:vars] needs g declared somewhere; inline host variables and
// [g:vars] values are read as Python literals where they are one (2222 is a
// number, 'x' a string), and as plain strings otherwise.
func ParseINI(data []byte, file string) (*Inventory, error) {
	inv := newInventory(file)
	group, state := "ungrouped", "hosts"
	pending := map[string]*pendingDecl{}
	var pendingOrder []string
	for i, raw := range strings.Split(string(data), "\n") {
		pos := Position{File: file, Line: i + 1}
		line := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		if i == 0 {
			line = strings.TrimPrefix(line, "\uFEFF")
		}
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if m := iniSection.FindStringSubmatch(line); m != nil {
			group, state = m[1], m[2]
			if state == "" {
				state = "hosts"
			}
			if state != "hosts" && state != "children" && state != "vars" {
				return nil, errorf(pos, "section [%s:%s] has unknown type %q (hosts, children or vars)", group, state, state)
			}
			if _, ok := inv.groups[group]; !ok {
				if _, ok := pending[group]; state == "vars" && !ok {
					pending[group] = &pendingDecl{state: "vars", pos: pos}
					pendingOrder = append(pendingOrder, group)
				}
				inv.addGroup(group, pos)
			}
			if d, ok := pending[group]; ok && state != "vars" {
				if d.state == "children" {
					inv.addPendingChildren(group, pending)
				} else {
					delete(pending, group)
				}
			}
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			return nil, errorf(pos, "invalid section %s: a section is [group], [group:children] or [group:vars], with no spaces", line)
		}
		switch state {
		case "hosts":
			if err := inv.iniHostLine(line, group, pos); err != nil {
				return nil, err
			}
		case "vars":
			k, v, ok := strings.Cut(line, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				return nil, errorf(pos, "expected key=value in [%s:vars], got %q", group, line)
			}
			inv.groups[group].Vars[k] = Value{V: literal(strings.TrimSpace(v)), Pos: pos}
		case "children":
			m := iniGroupName.FindStringSubmatch(line)
			if m == nil {
				return nil, errorf(pos, "expected a group name in [%s:children], got %q", group, line)
			}
			child := m[1]
			if _, ok := inv.groups[child]; ok {
				inv.addChild(group, child)
			} else if d, ok := pending[child]; ok {
				d.parents = append(d.parents, group)
			} else {
				pending[child] = &pendingDecl{state: "children", pos: pos, parents: []string{group}}
				pendingOrder = append(pendingOrder, child)
			}
		}
	}
	for _, name := range pendingOrder {
		d, ok := pending[name]
		if !ok {
			continue
		}
		if d.state == "vars" {
			return nil, errorf(d.pos, "section [%s:vars] is for a group that is never declared ([%s] or [%s:children])", name, name, name)
		}
		return nil, errorf(d.pos, "section [%s:children] includes undefined group %q", d.parents[len(d.parents)-1], name)
	}
	if err := inv.finish(); err != nil {
		return nil, err
	}
	return inv, nil
}

// addPendingChildren links a group, now declared, to the parents that
// named it before, and those parents to theirs when they too were pending.
func (inv *Inventory) addPendingChildren(group string, pending map[string]*pendingDecl) {
	for _, parent := range pending[group].parents {
		inv.addChild(parent, group)
		if d, ok := pending[parent]; ok && d.state == "children" {
			inv.addPendingChildren(parent, pending)
		}
	}
	delete(pending, group)
}

// iniHostLine reads "pattern[:port] key=value ...".
func (inv *Inventory) iniHostLine(line, group string, pos Position) error {
	tokens, err := shellSplit(line)
	if err != nil {
		return errorf(pos, "%v", err)
	}
	if len(tokens) == 0 {
		return nil
	}
	if tokens[0] == "---" {
		return errorf(pos, "host %q: '---' starts a YAML document; is this file YAML (name it .yml)?", tokens[0])
	}
	vars := map[string]Value{}
	for _, t := range tokens[1:] {
		k, v, ok := strings.Cut(t, "=")
		if !ok || k == "" {
			return errorf(pos, "expected key=value host variable after %q, got %q", tokens[0], t)
		}
		vars[k] = Value{V: literal(v), Pos: pos}
	}
	return inv.addHostEntry(tokens[0], group, vars, pos)
}

// literal reads an INI value the way Ansible's ast.literal_eval does for
// the literals that matter in an inventory: integers, floats, True, False,
// None and quoted strings (a trailing "# comment" is Python's and goes).
// Anything else is the string as written.
func literal(s string) any {
	code := s
	if q := pythonComment(s); q >= 0 {
		code = strings.TrimSpace(s[:q])
	}
	switch code {
	case "True":
		return true
	case "False":
		return false
	case "None":
		return nil
	}
	if n, err := strconv.Atoi(strings.ReplaceAll(code, "_", "")); err == nil && pythonInt(code) {
		return n
	}
	if f, err := strconv.ParseFloat(code, 64); err == nil && strings.ContainsAny(code, ".eE") && !strings.ContainsAny(code, "xXnN") {
		return f
	}
	if len(code) >= 2 && (code[0] == '"' || code[0] == '\'') && code[len(code)-1] == code[0] {
		if u, err := unquotePython(code); err == nil {
			return u
		}
	}
	return s
}

// pythonInt reports whether s is written as Python writes a decimal
// integer: no leading zeros ("0755" is a syntax error there, so a string
// here), underscores only between digits.
func pythonInt(s string) bool {
	d := strings.TrimPrefix(s, "-")
	if d == "" || d[0] == '_' || d[len(d)-1] == '_' || strings.Contains(d, "__") {
		return false
	}
	return d == "0" || d[0] != '0'
}

// pythonComment finds a '#' outside quotes, or -1.
func pythonComment(s string) int {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote == 0 && c == '#':
			return i
		}
	}
	return -1
}

func unquotePython(s string) (string, error) {
	q := s[0]
	body := s[1 : len(s)-1]
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == q {
			return "", fmt.Errorf("unescaped quote")
		}
		if c != '\\' || i+1 == len(body) {
			b.WriteByte(c)
			continue
		}
		i++
		switch body[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '\\', '\'', '"':
			b.WriteByte(body[i])
		default:
			b.WriteByte('\\')
			b.WriteByte(body[i])
		}
	}
	return b.String(), nil
}

// shellSplit splits a host line as Python's shlex.split(line,
// comments=True) does: words separated by blanks, single quotes literal,
// double quotes with backslash escapes, '#' starting a comment.
func shellSplit(line string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '#':
			if inWord {
				out = append(out, cur.String())
			}
			return out, nil
		case c == '\'':
			inWord = true
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("no closing quotation in %q", line)
			}
			cur.WriteString(line[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			inWord = true
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte(`\"$`+"`", line[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(line[i])
			}
			if i >= len(line) {
				return nil, fmt.Errorf("no closing quotation in %q", line)
			}
		case c == '\\':
			inWord = true
			if i+1 < len(line) {
				i++
				cur.WriteByte(line[i])
			}
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}
