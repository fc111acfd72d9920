package dashboard

import (
	"net/http"
	"time"

	"github.com/geneva-dev/geneva/goclient"
)

// limitRow is a limit key in use (geneva.limit_usage), with its times
// relative to now.
type limitRow struct {
	*goclient.LimitUsage
	// Full says the key's slots are all held (in progress at its
	// concurrency); RateFull, its window's starts at its rate.
	Full, RateFull bool
	// WaitingFor is how long its oldest waiter has waited ("" when none).
	WaitingFor string
	// WindowEndsIn is when its rate window ends ("" without one).
	WindowEndsIn string
}

func newLimitRow(u *goclient.LimitUsage, now time.Time) *limitRow {
	row := &limitRow{LimitUsage: u}
	row.Full = u.Concurrency != nil && u.InProgress >= int64(*u.Concurrency)
	row.RateFull = u.Rate != nil && u.StartsInWindow >= int64(*u.Rate)
	if u.WaitingSince != nil {
		if d := now.Sub(*u.WaitingSince); d >= time.Second {
			row.WaitingFor = wholeSeconds(d)
		} else {
			row.WaitingFor = "under a second"
		}
	}
	if u.WindowEnd != nil {
		if d := u.WindowEnd.Sub(now); d > 0 {
			row.WindowEndsIn = "in " + wholeSeconds(d)
		} else {
			row.WindowEndsIn = "now"
		}
	}
	return row
}

// limits lists every limit key in use (geneva.limit_usage): per limit and
// key, the executions in progress out of the concurrency, those waiting
// and for how long, the starts in the current window out of the rate.
func (h *handler) limits(w http.ResponseWriter, r *http.Request) {
	usage, err := h.client.LimitUsage(r.Context())
	if err != nil {
		h.failQuery(w, r, err)
		return
	}
	now := time.Now()
	rows := make([]*limitRow, len(usage))
	for i, u := range usage {
		rows[i] = newLimitRow(u, now)
	}
	h.render(w, r, http.StatusOK, "limits", h.newPage(r, "Limits", "limits", rows))
}
