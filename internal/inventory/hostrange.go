package inventory

import (
	"fmt"
	"strconv"
	"strings"
)

// splitHostPort splits an inventory host entry into its name pattern and
// port: "pi01:2222", "pi[01:04]:2222", "[fe80::1]:22". A bare IPv6 address
// (two or more colons outside brackets) has no port. port is "" when none
// was given.
func splitHostPort(s string) (host, port string, err error) {
	if strings.HasPrefix(s, "[") {
		// "[v6]:port" or "[v6]": an IPv6 literal in brackets, told apart
		// from a leading range by its two or more colons.
		if end := strings.Index(s, "]"); end > 0 && strings.Count(s[1:end], ":") >= 2 && !strings.Contains(s[end+1:], "[") {
			host, rest := s[1:end], s[end+1:]
			if rest == "" {
				return host, "", nil
			}
			if p, ok := strings.CutPrefix(rest, ":"); ok {
				return host, p, checkPort(s, p)
			}
			return "", "", fmt.Errorf("host %q: unexpected %q after the IPv6 address", s, rest)
		}
	}
	colons, balanced := topLevelColons(s)
	if !balanced {
		return "", "", fmt.Errorf("host %q: unbalanced brackets", s)
	}
	switch len(colons) {
	case 0:
		return s, "", nil
	case 1:
		host, port = s[:colons[0]], s[colons[0]+1:]
		if port == "" {
			return "", "", fmt.Errorf("host %q: a colon with no port after it", s)
		}
		return host, port, checkPort(s, port)
	default:
		return s, "", nil // a bare IPv6 address
	}
}

func checkPort(entry, port string) error {
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("host %q: %q is not a port number", entry, port)
	}
	return nil
}

// topLevelColons finds the colons of s outside brackets, and whether its
// brackets balance.
func topLevelColons(s string) (at []int, balanced bool) {
	depth := 0
	for i, r := range s {
		switch r {
		case '[':
			depth++
		case ']':
			depth--
		case ':':
			if depth == 0 {
				at = append(at, i)
			}
		}
	}
	return at, depth == 0
}

// expandRange expands Ansible host ranges: "pi[01:04]" is pi01..pi04
// (leading zeros keep the width), "node[a:c]" is nodea..nodec, and
// "n[0:10:5]" steps by 5. Several ranges in one name multiply.
func expandRange(pattern string) ([]string, error) {
	open := strings.Index(pattern, "[")
	if open < 0 {
		if strings.Contains(pattern, "]") {
			return nil, fmt.Errorf("host %q: unbalanced brackets", pattern)
		}
		return []string{pattern}, nil
	}
	end := strings.Index(pattern[open:], "]")
	if end < 0 {
		return nil, fmt.Errorf("host %q: unbalanced brackets", pattern)
	}
	end += open
	head, spec, tail := pattern[:open], pattern[open+1:end], pattern[end+1:]
	parts := strings.Split(spec, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, fmt.Errorf("host %q: a range is [begin:end] or [begin:end:step]", pattern)
	}
	beg, last := parts[0], parts[1]
	if beg == "" {
		beg = "0"
	}
	if last == "" {
		return nil, fmt.Errorf("host %q: the range has no end", pattern)
	}
	step := 1
	if len(parts) == 3 && parts[2] != "" {
		n, err := strconv.Atoi(parts[2])
		if err != nil || n < 1 {
			return nil, fmt.Errorf("host %q: range step %q is not a positive number", pattern, parts[2])
		}
		step = n
	}
	var items []string
	if isLetter(beg) || isLetter(last) {
		if !isLetter(beg) || !isLetter(last) {
			return nil, fmt.Errorf("host %q: a letter range goes from one letter to another", pattern)
		}
		if beg[0] > last[0] {
			return nil, fmt.Errorf("host %q: range begins after it ends", pattern)
		}
		for c := int(beg[0]); c <= int(last[0]); c += step {
			items = append(items, string(rune(c)))
		}
	} else {
		b, err1 := strconv.Atoi(beg)
		e, err2 := strconv.Atoi(last)
		if err1 != nil || err2 != nil || b < 0 {
			return nil, fmt.Errorf("host %q: range [%s] is neither numbers nor letters", pattern, spec)
		}
		if b > e {
			return nil, fmt.Errorf("host %q: range begins after it ends", pattern)
		}
		width := 0
		if len(beg) > 1 && beg[0] == '0' {
			if len(beg) != len(last) {
				return nil, fmt.Errorf("host %q: a zero-padded range needs begin and end of equal length", pattern)
			}
			width = len(beg)
		}
		for n := b; n <= e; n += step {
			items = append(items, fmt.Sprintf("%0*d", width, n))
		}
	}
	tails, err := expandRange(tail)
	if err != nil {
		return nil, fmt.Errorf("host %q: %w", pattern, err)
	}
	var out []string
	for _, it := range items {
		for _, t := range tails {
			out = append(out, head+it+t)
		}
	}
	return out, nil
}

func isLetter(s string) bool {
	return len(s) == 1 && (s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z')
}
