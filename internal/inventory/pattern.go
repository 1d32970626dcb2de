package inventory

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Select returns the hosts an Ansible host pattern names, resolved, in
// order: terms in the order Ansible applies them, each group's hosts in
// the order the inventory declares them.
//
// A pattern is terms separated by ':' or ','. A term is all, *, a group,
// a host, a glob (pi0*, pi5-[ab]) or a regular expression after '~',
// optionally with a subscript (pis[0], pis[-1], pis[1:3] with both ends
// included, pis[2:]); '&' before a term intersects, '!' excludes. As in Ansible, the plain terms
// are united first, then the '&' terms intersect, then the '!' terms
// exclude, whatever order they were written in, and a pattern of only
// '&' and '!' terms starts from all. Unlike Ansible, which warns and goes
// on, a term that matches nothing is an error: a typo must not quietly
// widen or empty a benchmark.
func (inv *Inventory) Select(pattern string) ([]Host, error) {
	names, err := inv.Match(pattern)
	if err != nil {
		return nil, err
	}
	hosts := make([]Host, 0, len(names))
	for _, n := range names {
		h, err := inv.Resolve(n)
		if err != nil {
			return nil, err
		}
		hosts = append(hosts, h)
	}
	return hosts, nil
}

// Match returns the host names pattern selects (see Select).
func (inv *Inventory) Match(pattern string) ([]string, error) {
	terms := splitPattern(pattern)
	if len(terms) == 0 {
		return nil, fmt.Errorf("host pattern %q is empty", pattern)
	}
	var plain, and, not []string
	for _, t := range terms {
		switch t[0] {
		case '&':
			and = append(and, t[1:])
		case '!':
			not = append(not, t[1:])
		default:
			plain = append(plain, t)
		}
	}
	if len(plain) == 0 {
		plain = []string{"all"}
	}
	var hosts []string
	for _, t := range plain {
		m, err := inv.matchTerm(t)
		if err != nil {
			return nil, fmt.Errorf("host pattern %q: %w", pattern, err)
		}
		for _, h := range m {
			if !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
	}
	for _, t := range and {
		m, err := inv.matchTerm(t)
		if err != nil {
			return nil, fmt.Errorf("host pattern %q: %w", pattern, err)
		}
		hosts = filter(hosts, func(h string) bool { return slices.Contains(m, h) })
	}
	for _, t := range not {
		m, err := inv.matchTerm(t)
		if err != nil {
			return nil, fmt.Errorf("host pattern %q: %w", pattern, err)
		}
		hosts = filter(hosts, func(h string) bool { return !slices.Contains(m, h) })
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("host pattern %q selects no host of %s", pattern, inv.File)
	}
	return hosts, nil
}

// splitPattern splits on ',' when there is one, else on ':' outside
// brackets (so "web[1:3]" stays whole), as Ansible's split_host_pattern.
func splitPattern(p string) []string {
	var parts []string
	if strings.Contains(p, ",") {
		parts = strings.Split(p, ",")
	} else {
		start := 0
		colons, _ := topLevelColons(p)
		for _, i := range colons {
			parts = append(parts, p[start:i])
			start = i + 1
		}
		parts = append(parts, p[start:])
	}
	var out []string
	for _, s := range parts {
		if s = strings.TrimSpace(s); s != "" && s != "&" && s != "!" {
			out = append(out, s)
		}
	}
	return out
}

// subscript is Ansible's "group[0]", "group[-1]", "group[1:3]" (both ends
// included) and "group[2:]" on a term. As in Ansible, brackets holding
// digits are always a subscript ("web[12]" is host 12 of web, and the old
// "web[1-2]" is "web[1:2]"): a glob's character class needs letters.
var subscript = regexp.MustCompile(`^(.+)\[(?:(-?[0-9]+)|([0-9]+)[:-]([0-9]+)?)\]$`)

// matchTerm is one term: an exact host name first, then groups matching
// it (exactly or as a glob or regex), then, for a glob or regex or when
// no group matched, hosts matching it; a subscript then picks among them.
func (inv *Inventory) matchTerm(term string) ([]string, error) {
	if _, ok := inv.hosts[term]; ok {
		return []string{term}, nil
	}
	if m := subscript.FindStringSubmatch(term); m != nil && term[0] != '~' {
		hosts, err := inv.matchTerm(m[1])
		if err != nil {
			return nil, err
		}
		n := len(hosts)
		if m[2] != "" {
			i, _ := strconv.Atoi(m[2])
			if i < 0 {
				i += n
			}
			if i < 0 || i >= n {
				return nil, fmt.Errorf("%q: %q has %d hosts, no host %s", term, m[1], n, m[2])
			}
			return hosts[i : i+1], nil
		}
		from, _ := strconv.Atoi(m[3])
		to := n - 1
		if m[4] != "" {
			to, _ = strconv.Atoi(m[4])
		}
		if from >= n || to < from {
			return nil, fmt.Errorf("%q: %q has %d hosts, none in [%s:%s]", term, m[1], n, m[3], m[4])
		}
		return hosts[from:min(to+1, n)], nil
	}
	re, err := termRegexp(term)
	if err != nil {
		return nil, err
	}
	in := map[string]bool{}
	matchedGroup := false
	for _, g := range inv.order {
		if re.MatchString(g) {
			matchedGroup = true
			for _, h := range inv.groupHosts(g) {
				in[h] = true
			}
		}
	}
	if !matchedGroup || term[0] == '~' || strings.ContainsAny(term, ".?*[") {
		for _, h := range inv.hostOr {
			if re.MatchString(h) {
				in[h] = true
			}
		}
	}
	if len(in) == 0 {
		return nil, fmt.Errorf("%q matches no group or host in %s", term, inv.File)
	}
	out := make([]string, 0, len(in))
	for h := range in {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return inv.hosts[out[i]].order < inv.hosts[out[j]].order })
	return out, nil
}

// groupHosts is every host in g or its descendants.
func (inv *Inventory) groupHosts(g string) []string {
	if g == "all" {
		return inv.hostOr
	}
	seen := map[string]bool{}
	var out []string
	var walk func(string)
	walk = func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		gr := inv.groups[name]
		out = append(out, gr.Hosts...)
		for _, c := range gr.Children {
			walk(c)
		}
	}
	walk(g)
	return out
}

// termRegexp compiles a term: "~re" is a regular expression matched from
// the start of a name (Python's re.match); anything else a shell glob
// matched against the whole name (fnmatch).
func termRegexp(term string) (*regexp.Regexp, error) {
	if r, ok := strings.CutPrefix(term, "~"); ok {
		re, err := regexp.Compile(`^(?:` + r + `)`)
		if err != nil {
			return nil, fmt.Errorf("invalid regular expression in %q: %w", term, err)
		}
		return re, nil
	}
	var b strings.Builder
	b.WriteString("^(?:")
	for i := 0; i < len(term); i++ {
		switch c := term[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '[':
			end := strings.IndexByte(term[i+1:], ']')
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := term[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(")$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("invalid glob %q: %w", term, err)
	}
	return re, nil
}

func filter(list []string, keep func(string) bool) []string {
	var out []string
	for _, s := range list {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}
