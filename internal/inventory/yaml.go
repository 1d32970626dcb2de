package inventory

import (
	"strconv"

	"gopkg.in/yaml.v3"
)

// ParseYAML reads an inventory in the format of Ansible's yaml plugin (JSON
// is YAML too): top-level keys are groups, each a mapping of hosts,
// children and vars. file names the source in errors.
//
// Unlike Ansible, which warns and goes on, a key other than hosts,
// children and vars in a group is an error: a "host:" typo must not drop
// hosts from a benchmark in silence.
func ParseYAML(data []byte, file string) (*Inventory, error) {
	inv := newInventory(file)
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, errorf(Position{File: file}, "not valid YAML: %v", err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, errorf(Position{File: file}, "the inventory is empty")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, errorf(pos(file, root), "expected a mapping of groups at the top level")
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "plugin" {
			return nil, errorf(pos(file, root.Content[i]), "this is the configuration of an inventory plugin (plugin: %s), not a static inventory; run ansible-inventory -i FILE --list --yaml and pass its output", root.Content[i+1].Value)
		}
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if _, err := inv.yamlGroup(file, root.Content[i], root.Content[i+1]); err != nil {
			return nil, err
		}
	}
	if err := inv.finish(); err != nil {
		return nil, err
	}
	return inv, nil
}

func pos(file string, n *yaml.Node) Position { return Position{File: file, Line: n.Line} }

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func (inv *Inventory) yamlGroup(file string, key, body *yaml.Node) (string, error) {
	if key.Kind != yaml.ScalarNode || key.Value == "" {
		return "", errorf(pos(file, key), "a group name must be a plain string")
	}
	name := key.Value
	if body.Kind != yaml.MappingNode && !isNull(body) {
		return "", errorf(pos(file, body), "group %q must be a mapping (hosts, children, vars), found a %s", name, kindName(body))
	}
	inv.addGroup(name, pos(file, key))
	for i := 0; i+1 < len(body.Content); i += 2 {
		k, v := body.Content[i], body.Content[i+1]
		section := k.Value
		switch section {
		case "hosts", "children", "vars":
		default:
			return "", errorf(pos(file, k), "group %q: unexpected key %q; only hosts, children and vars are valid", name, section)
		}
		if isNull(v) {
			continue
		}
		// A plain string stands for a mapping with one key, as in Ansible.
		if v.Kind == yaml.ScalarNode {
			v = &yaml.Node{Kind: yaml.MappingNode, Line: v.Line, Content: []*yaml.Node{v, {Kind: yaml.ScalarNode, Tag: "!!null", Line: v.Line}}}
		}
		if v.Kind != yaml.MappingNode {
			return "", errorf(pos(file, v), "group %q: %s must be a mapping, found a %s", name, section, kindName(v))
		}
		for j := 0; j+1 < len(v.Content); j += 2 {
			ek, ev := v.Content[j], v.Content[j+1]
			switch section {
			case "vars":
				val, err := decodeValue(file, ev)
				if err != nil {
					return "", err
				}
				inv.groups[name].Vars[ek.Value] = val
			case "children":
				child, err := inv.yamlGroup(file, ek, ev)
				if err != nil {
					return "", err
				}
				if child == name {
					return "", errorf(pos(file, ek), "group %q lists itself as a child", name)
				}
				inv.addChild(name, child)
			case "hosts":
				if err := inv.yamlHost(file, name, ek, ev); err != nil {
					return "", err
				}
			}
		}
	}
	return name, nil
}

func (inv *Inventory) yamlHost(file, group string, key, body *yaml.Node) error {
	p := pos(file, key)
	if key.Kind != yaml.ScalarNode || key.Value == "" {
		return errorf(p, "group %q: a host name must be a plain string", group)
	}
	if body.Kind != yaml.MappingNode && !isNull(body) {
		return errorf(pos(file, body), "host %q: its variables must be a mapping, found a %s", key.Value, kindName(body))
	}
	vars := map[string]Value{}
	for i := 0; i+1 < len(body.Content); i += 2 {
		val, err := decodeValue(file, body.Content[i+1])
		if err != nil {
			return err
		}
		vars[body.Content[i].Value] = val
	}
	return inv.addHostEntry(key.Value, group, vars, p)
}

func decodeValue(file string, n *yaml.Node) (Value, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return Value{}, errorf(pos(file, n), "%v", err)
	}
	return Value{V: v, Pos: pos(file, n)}, nil
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.AliasNode:
		return "alias"
	}
	return "scalar " + strconv.Quote(n.Value)
}
