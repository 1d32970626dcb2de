package analysis

// Matrix is a comparison at a glance: a row per workload, a column per
// group (a target without grouping) and round, each cell the workload's
// primary figure with its marks. Reports show it before the per-workload
// detail.
type Matrix struct {
	// Names are the columns' groups or targets, in display order.
	Names []string
	// Rounds are the rounds every name is shown in, side by side.
	Rounds []string
	Rows   []MatrixRow
}

// MatrixRow is one workload across every name and round.
type MatrixRow struct {
	Workload string
	// Metric is the workload's primary metric, the one every cell holds.
	Metric string
	// Cells are name-major: Cells[i*len(Rounds)+j] is Names[i] in Rounds[j].
	Cells []MatrixCell
}

// MatrixCell is one name's primary figure in one round.
type MatrixCell struct {
	Name  string
	Round string
	// Measured is false where the name has no figure for the workload in
	// this round; the other fields are then zero.
	Measured bool
	// Value is in the metric's base unit.
	Value float64
	Best  bool
	// Efficiency is the figure against the baseline, oriented so that more
	// is better; nil for the baseline itself (IsBaseline) and without one.
	Efficiency *Efficiency
	IsBaseline bool
	Unstable   bool
	Outlier    bool
}

// Cell returns the cell of name in round.
func (r MatrixRow) Cell(name, round string) MatrixCell {
	for _, c := range r.Cells {
		if c.Name == name && c.Round == round {
			return c
		}
	}
	return MatrixCell{Name: name, Round: round}
}

// matrix builds the Matrix from the sections, so its cells say exactly
// what the per-workload tables say.
func (v *View) matrix() {
	c := v.Comparison
	m := &Matrix{Names: c.Groups, Rounds: c.Rounds}
	for _, w := range c.Workloads {
		row := MatrixRow{Workload: w, Metric: c.PrimaryMetric(w)}
		any := false
		for _, name := range c.Groups {
			for _, round := range c.Rounds {
				cell := MatrixCell{Name: name, Round: round}
				if r, ok := v.row(round, w, name); ok && r.Primary != nil {
					cell.Measured, cell.Value, cell.Best = true, r.Primary.Mean, r.Best
					cell.Efficiency, cell.IsBaseline = r.Efficiency, r.IsBaseline
					cell.Unstable, cell.Outlier = r.Unstable, r.Outlier
					any = true
				}
				row.Cells = append(row.Cells, cell)
			}
		}
		if any {
			m.Rows = append(m.Rows, row)
		}
	}
	if len(m.Rows) > 0 {
		v.Matrix = m
	}
}

// row finds a section's row.
func (v *View) row(round, workload, name string) (Row, bool) {
	for _, s := range v.Sections {
		if s.Round != round || s.Workload != workload {
			continue
		}
		for _, r := range s.Rows {
			if r.Name == name {
				return r, true
			}
		}
	}
	return Row{}, false
}
