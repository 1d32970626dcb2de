package web

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// ResolveToken picks the bearer token from a flag, a file (its first
// line) or the environment's value, in that order; at most one of the
// flag and the file may be given. "" means none.
func ResolveToken(flag, file, env string) (string, error) {
	if flag != "" && file != "" {
		return "", errors.New("give --token or --token-file, not both")
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		if t := strings.TrimSpace(line); t != "" {
			return t, nil
		}
		return "", fmt.Errorf("--token-file %s: the file holds no token", file)
	}
	if flag != "" {
		return flag, nil
	}
	return strings.TrimSpace(env), nil
}
