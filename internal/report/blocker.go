package report

import (
	"fmt"
	"io"
	"time"

	"github.com/geneva-dev/geneva/goclient"
)

// Blocker says, in a line, why a ready workflow's execution has not started
// (a row of geneva.workflow_blockers), with its numbers; times as Stamp
// prints them, and how far from now.
func Blocker(b *goclient.WorkflowBlocker, now time.Time) string {
	switch b.Reason {
	case goclient.BlockerWait:
		return "its wait has not passed: due " + at(b.HeldUntil, now)
	case goclient.BlockerEvent:
		text := "awaits the event " + Deref(b.Event)
		if b.HeldUntil != nil {
			text += "; its timeout falls " + at(b.HeldUntil, now)
		}
		return text
	case goclient.BlockerConcurrency:
		text := fmt.Sprintf("held by %s: %d in progress of %d", LimitName(b), Deref(b.InProgress), Deref(b.Concurrency))
		return text + fmt.Sprintf(", it is %s of %d waiting for a slot", Ordinal(Deref(b.Position)), Deref(b.Waiting))
	case goclient.BlockerRateLimit:
		starts := "starts"
		if Deref(b.StartsInWindow) == 1 {
			starts = "start"
		}
		return fmt.Sprintf("held by %s: %d %s of %d per %s in the current window; its start is reserved for the window at %s",
			LimitName(b), Deref(b.StartsInWindow), starts, Deref(b.Rate), Deref(b.Per), at(b.HeldUntil, now))
	case goclient.BlockerQueue:
		text := "due, but no worker serves the queue " + Deref(b.Queue) + ": "
		switch {
		case b.QueuePausedAt != nil:
			text += "it is paused in River since " + at(b.QueuePausedAt, now)
		case b.QueueReportedAt != nil:
			text += "no worker reported it since " + at(b.QueueReportedAt, now)
		default:
			text += "no worker ever reported it"
		}
		if b.LastFetchedAt != nil {
			text += "; last fetch " + at(b.LastFetchedAt, now)
		} else {
			text += "; no fetch recorded"
		}
		return text
	}
	return string(b.Reason)
}

// Blockers prints, for each row, "not started: " and its line (Blocker).
func Blockers(out io.Writer, blockers []*goclient.WorkflowBlocker, now time.Time) {
	for _, b := range blockers {
		fmt.Fprintf(out, "not started: %s\n", Blocker(b, now))
	}
}

// LimitName names a blocker's limit and key: `the concurrency of Sync (key
// acme)`, `the limit stripe_api`.
func LimitName(b *goclient.WorkflowBlocker) string {
	var name string
	switch Deref(b.LimitKind) {
	case goclient.LimitKindNamed:
		name = "the limit " + Deref(b.LimitName)
	case goclient.LimitKindRate:
		name = "the rate_limit of " + Deref(b.LimitName)
	default:
		name = "the concurrency of " + Deref(b.LimitName)
	}
	if k := Deref(b.Key); k != "" {
		name += " (key " + k + ")"
	}
	return name
}

// at prints an instant and how far it is from now: "2030-01-01 13:00:00
// UTC (in 1h0m0s)", "… (5m0s ago)".
func at(t *time.Time, now time.Time) string {
	if t == nil {
		return "(unknown)"
	}
	d := t.Sub(now).Round(time.Second)
	switch {
	case d > 0:
		return fmt.Sprintf("%s (in %s)", Stamp(*t), d)
	case d < 0:
		return fmt.Sprintf("%s (%s ago)", Stamp(*t), -d)
	}
	return Stamp(*t) + " (now)"
}

// Ordinal prints 1st, 2nd, 3rd, 4th, 11th, 21st...
func Ordinal(n int64) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}
