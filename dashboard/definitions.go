package dashboard

import (
	"net/http"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/report"
)

// definitionRow is a workflow type's current definition with what it
// decides for the whole type (Rules), its steps and what each does, and its
// earlier versions.
type definitionRow struct {
	*goclient.DefinitionVersion
	Rules   []string
	Steps   []*goclient.DefinitionStep
	Earlier []*goclient.DefinitionVersion
}

// definitions lists every workflow type's definition
// (geneva.definition_versions): its version, when and by whom it was
// defined, what it decides for the type (concurrency, rate limit, exception
// policies), its steps and what each does (geneva.definition_steps: wait,
// await, limits, queue, an HTTP step's endpoint, exception policies,
// skip_if), and its earlier versions.
func (h *handler) definitions(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	versions, err := h.client.DefinitionVersions(ctx, "")
	if err != nil {
		h.failQuery(w, r, err)
		return
	}
	steps, err := h.definitionSteps(ctx, "")
	if err != nil {
		h.failQuery(w, r, err)
		return
	}
	var rows []*definitionRow
	byType := map[string]*definitionRow{}
	for _, v := range versions { // newest first per type
		if row := byType[v.WorkflowType]; row != nil {
			row.Earlier = append(row.Earlier, v)
			continue
		}
		row := &definitionRow{DefinitionVersion: v, Rules: report.TypeRules(v.Definition)}
		byType[v.WorkflowType] = row
		rows = append(rows, row)
	}
	for _, s := range steps {
		if row := byType[s.WorkflowType]; row != nil {
			row.Steps = append(row.Steps, s)
		}
	}
	h.render(w, r, http.StatusOK, "definitions", h.newPage(r, "Definitions", "definitions", rows))
}
