package web

import (
	"errors"
	"io"
	"net/http"
	"sort"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

// classes is the classes page: what `storbench classes` shows of each
// class the database holds answers for (the dashboard has no cluster to
// list the others from).
func (s *Server) classes(w http.ResponseWriter, r *http.Request) {
	status := http.StatusOK
	classes, err := s.storedClasses(r)
	v := render.NewDashboardClasses(s.page("Classes", "classes"), classes)
	if err != nil {
		v.Problem, status = err.Error(), failure(err)
		if errors.Is(err, errNoDatabase) {
			status = http.StatusOK
		}
	}
	s.html(w, status, func(b io.Writer) error { return render.DashboardClassesHTML(b, v) })
}

// storedClasses are the classes with a stored qualification (round class)
// or complete results labelled with their storage_class, by name.
func (s *Server) storedClasses(r *http.Request) ([]analysis.Class, error) {
	st, err := s.reader(r)
	if err != nil {
		return nil, err
	}
	figs, err := st.Figures(r.Context(), store.ResultFilter{Status: result.StatusComplete})
	if err != nil {
		return nil, err
	}
	classRes, err := st.Results(r.Context(), store.ResultFilter{Round: result.RoundClass})
	if err != nil {
		return nil, err
	}
	quals := analysis.ClassQualifications(classRes)
	names := map[string]bool{}
	for n := range quals {
		names[n] = true
	}
	for n := range analysis.ClassFigures(figs) {
		names[n] = true
	}
	var scs []result.StorageClass
	for n := range names {
		scs = append(scs, result.StorageClass{Name: n})
	}
	sort.Slice(scs, func(i, j int) bool { return scs[i].Name < scs[j].Name })
	return analysis.Classes(scs, figs, quals), nil
}
