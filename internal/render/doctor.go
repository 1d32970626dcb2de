package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/storbench/storbench/internal/result"
)

// DoctorDocument is what storbench doctor --output json prints.
type DoctorDocument struct {
	Checks []result.Check `json:"checks"`
}

var doctorMarks = map[result.CheckStatus]string{result.CheckOK: "[ok]  ", result.CheckWarn: "[warn]", result.CheckFail: "[FAIL]", result.CheckInfo: "[info]"}

// DoctorText writes the checks grouped by area, each with its status, its
// detail and the fix for a problem.
func DoctorText(w io.Writer, doc DoctorDocument) error {
	area := ""
	for _, c := range doc.Checks {
		if c.Area != area {
			area = c.Area
			if _, err := fmt.Fprintf(w, "\n%s\n", strings.ToUpper(area)); err != nil {
				return err
			}
		}
		line := fmt.Sprintf("  %s %s", doctorMarks[c.Status], c.Name)
		if c.Detail != "" {
			line += ": " + c.Detail
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
		if c.Fix != "" {
			if _, err := fmt.Fprintf(w, "         fix: %s\n", c.Fix); err != nil {
				return err
			}
		}
	}
	return nil
}
