package inventory

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/storbench/storbench/internal/inputfile"
)

// loadVarsDirs reads dir/group_vars and dir/host_vars as Ansible's
// host_group_vars plugin does: for a group or host NAME, the file NAME,
// NAME.yml, NAME.yaml or NAME.json, or every such file inside a directory
// NAME/ in lexical order (later files win). Entries for names the
// inventory does not have are ignored; ansible-vault files are skipped
// and listed in Skipped.
func (inv *Inventory) loadVarsDirs(dir string) error {
	var err error
	if inv.groupFiles, err = inv.readVarsDir(filepath.Join(dir, "group_vars"), func(n string) bool { _, ok := inv.groups[n]; return ok }); err != nil {
		return err
	}
	inv.hostFiles, err = inv.readVarsDir(filepath.Join(dir, "host_vars"), func(n string) bool { _, ok := inv.hosts[n]; return ok })
	return err
}

func varsName(file string) (string, bool) {
	base := filepath.Base(file)
	if strings.HasPrefix(base, ".") || strings.HasSuffix(base, "~") {
		return "", false
	}
	switch ext := filepath.Ext(base); ext {
	case ".yml", ".yaml", ".json":
		return strings.TrimSuffix(base, ext), true
	case "":
		return base, true
	}
	return "", false
}

func (inv *Inventory) readVarsDir(dir string, known func(string) bool) (map[string]map[string]Value, error) {
	out := map[string]map[string]Value{}
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		var files []string
		name := e.Name()
		if e.IsDir() {
			err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if _, ok := varsName(p); ok && !d.IsDir() {
					files = append(files, p)
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", path, err)
			}
			sort.Strings(files)
		} else {
			n, ok := varsName(path)
			if !ok {
				continue
			}
			name, files = n, []string{path}
		}
		if !known(name) {
			continue
		}
		for _, f := range files {
			if err := inv.readVarsFile(f, name, out); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func (inv *Inventory) readVarsFile(file, name string, out map[string]map[string]Value) error {
	data, err := inputfile.Read(file)
	if err != nil {
		return fmt.Errorf("reading variables: %w", err)
	}
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("$ANSIBLE_VAULT")) {
		inv.Skipped = append(inv.Skipped, file+": encrypted with ansible-vault; storbench reads no vault, so its variables are not used")
		return nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return errorf(Position{File: file}, "not valid YAML: %v", err)
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return errorf(pos(file, root), "variables of %q must be a mapping, found a %s", name, kindName(root))
	}
	if out[name] == nil {
		out[name] = map[string]Value{}
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		v, err := decodeValue(file, root.Content[i+1])
		if err != nil {
			return err
		}
		out[name][root.Content[i].Value] = v
	}
	return nil
}
