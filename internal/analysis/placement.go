package analysis

import "slices"

// Placement is the general verdict as one table: a row per use (databases,
// etcd, log aggregation...), a column per subject (a group or target, with
// its round when there are several), each cell the rating.
type Placement struct {
	Subjects []string
	Uses     []PlacementUse
	// Other are the verdict's checks that are not ratings of a use (a
	// write cliff's pace), in their order.
	Other []Check
}

// PlacementUse is one use across the subjects.
type PlacementUse struct {
	Name      string
	Threshold string
	Source    string
	// Cells match Placement.Subjects; a cell without Rating was not judged
	// (the figures it needs were not measured).
	Cells []PlacementCell
}

// PlacementCell is one subject's rating for one use.
type PlacementCell struct {
	// Rating is RatingGood, RatingAcceptable, RatingAvoid or "".
	Rating string
	Status Status
	// Detail holds the figures behind the rating.
	Detail string
}

// PlacementOf lays out a general verdict as a Placement; other verdicts
// have none.
func PlacementOf(v *Verdict) (*Placement, bool) {
	if v == nil || v.For != ForGeneral {
		return nil, false
	}
	p := &Placement{}
	use := map[string]int{}
	type cellAt struct {
		use, subject int
		cell         PlacementCell
	}
	var cells []cellAt
	for _, ch := range v.Checks {
		if ch.Unit != ratingUnit {
			p.Other = append(p.Other, ch)
			continue
		}
		si := slices.Index(p.Subjects, ch.Subject)
		if si < 0 {
			p.Subjects = append(p.Subjects, ch.Subject)
			si = len(p.Subjects) - 1
		}
		ui, ok := use[ch.Name]
		if !ok {
			p.Uses = append(p.Uses, PlacementUse{Name: ch.Name, Threshold: ch.Threshold, Source: ch.Source})
			ui = len(p.Uses) - 1
			use[ch.Name] = ui
		}
		cells = append(cells, cellAt{ui, si, PlacementCell{Rating: ch.Display, Status: ch.Status, Detail: ch.Detail}})
	}
	if len(p.Uses) == 0 {
		return nil, false
	}
	for i := range p.Uses {
		p.Uses[i].Cells = make([]PlacementCell, len(p.Subjects))
	}
	for _, c := range cells {
		p.Uses[c.use].Cells[c.subject] = c.cell
	}
	// Uses in the order the rules list them, whoever was judged first.
	slices.SortStableFunc(p.Uses, func(a, b PlacementUse) int { return useOrder(a.Name) - useOrder(b.Name) })
	return p, true
}
