package dashboard

import (
	"context"
	"fmt"
	"time"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/report"
)

// blockerRow is a reason a ready workflow's execution has not started (a
// row of geneva.workflow_blockers), with its times relative to now.
type blockerRow struct {
	*goclient.WorkflowBlocker
	// Limit names the limit and its key ("the concurrency of Sync (key
	// acme)"); Position is the place in the key's line ("2nd"); Starts
	// counts a rate window's starts ("1 start").
	Limit, Position, Starts string
	// Until, Reported and Fetched are HeldUntil, QueueReportedAt and
	// LastFetchedAt from now: "in 4m00s", "16m00s ago" ("" when nil).
	Until, Reported, Fetched string
}

func newBlockerRow(b *goclient.WorkflowBlocker, now time.Time) *blockerRow {
	row := &blockerRow{WorkflowBlocker: b, Until: fromNow(b.HeldUntil, now),
		Reported: fromNow(b.QueueReportedAt, now), Fetched: fromNow(b.LastFetchedAt, now)}
	if b.LimitKind != nil {
		row.Limit = report.LimitName(b)
	}
	if b.Position != nil {
		row.Position = report.Ordinal(*b.Position)
	}
	if b.StartsInWindow != nil {
		row.Starts = fmt.Sprintf("%d start", *b.StartsInWindow)
		if *b.StartsInWindow != 1 {
			row.Starts += "s"
		}
	}
	return row
}

// fromNow says when t is from now: "in 4m00s", "16m00s ago", "now".
func fromNow(t *time.Time, now time.Time) string {
	if t == nil {
		return ""
	}
	d := t.Sub(now).Round(time.Second)
	switch {
	case d > 0:
		return "in " + wholeSeconds(d)
	case d < 0:
		return wholeSeconds(-d) + " ago"
	}
	return "now"
}

// blockers reads geneva.workflow_blockers: the rows of one workflow
// (workflowID), or those of a reason, at most limit.
func (h *handler) blockers(ctx context.Context, params *goclient.WorkflowBlockersParams) ([]*blockerRow, error) {
	list, err := h.client.WorkflowBlockers(ctx, params)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	rows := make([]*blockerRow, len(list))
	for i, b := range list {
		rows[i] = newBlockerRow(b, now)
	}
	return rows, nil
}
