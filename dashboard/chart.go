package dashboard

import (
	"fmt"
	"html/template"
	"slices"
	"strings"
	"time"

	"github.com/geneva-dev/geneva/goclient"
)

// outcomeGroups sort outcomes into the chart's series, in stacking order.
// Their classes (series-*) and the legend's (legend-key) are the chart's
// own: a table cell's class (a schedule's "skip", a limit's "key") must not
// take a series' color.
var outcomeGroups = []struct {
	name, class string
	outcomes    []goclient.Outcome
}{
	{"succeeded", "series-ok", []goclient.Outcome{goclient.OutcomeSuccess, goclient.OutcomeSuspended}},
	{"reattempted", "series-retry", []goclient.Outcome{
		goclient.OutcomeReattempted, goclient.OutcomeReattemptedByException, goclient.OutcomeRecovered,
	}},
	{"skipped", "series-skip", []goclient.Outcome{
		goclient.OutcomeSkippedByCondition, goclient.OutcomeSkippedByFlowControl, goclient.OutcomeSkippedByException,
		goclient.OutcomeSkippedExternally, goclient.OutcomeSkippedByTimeout,
	}},
	{"paused", "series-pause", []goclient.Outcome{
		goclient.OutcomePausedByFlowControl, goclient.OutcomePausedByException, goclient.OutcomePausedByTimeout,
	}},
	{"failed or canceled", "series-fail", nil}, // everything else
}

func outcomeGroup(outcome goclient.Outcome) int {
	for i, g := range outcomeGroups {
		if slices.Contains(g.outcomes, outcome) {
			return i
		}
	}
	return len(outcomeGroups) - 1
}

// throughputChart draws the step executions ended per minute over the hour
// up to now (a minute), stacked by outcome group, as inline SVG.
func throughputChart(points []*throughput, now time.Time) template.HTML {
	const minutes = 60
	const width, height, left, bottom, top = 720.0, 180.0, 44.0, 22.0, 8.0
	var counts [minutes][]int64
	for i := range counts {
		counts[i] = make([]int64, len(outcomeGroups))
	}
	start := now.Add(-(minutes - 1) * time.Minute)
	for _, p := range points {
		i := int(p.Minute.Sub(start) / time.Minute)
		if i < 0 || i >= minutes {
			continue
		}
		counts[i][outcomeGroup(p.Outcome)] += p.Executions
	}
	var peak int64 = 1
	for _, c := range counts {
		var sum int64
		for _, n := range c {
			sum += n
		}
		peak = max(peak, sum)
	}
	scale := niceCeil(peak)
	plotW, plotH := width-left-4, height-bottom-top
	barW := plotW / minutes

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %.0f %.0f" role="img" aria-label="Step executions ended per minute over the last hour, by outcome">`, width, height)
	// axis and grid
	for _, frac := range []float64{0, 0.5, 1} {
		y := top + plotH*(1-frac)
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, left, y, width-4, y)
		fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="end">%d</text>`, left-4, y+4, int64(float64(scale)*frac))
	}
	for i, c := range counts {
		x := left + float64(i)*barW
		y := top + plotH
		minute := start.Add(time.Duration(i) * time.Minute)
		for g, n := range c {
			if n == 0 {
				continue
			}
			h := plotH * float64(n) / float64(scale)
			y -= h
			fmt.Fprintf(&b, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s UTC: %d %s</title></rect>`,
				outcomeGroups[g].class, x+0.5, y, max(barW-1, 1), h, minute.UTC().Format("15:04"), n, outcomeGroups[g].name)
		}
		switch {
		case i == minutes-1:
			fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="end">%s</text>`,
				x+barW, height-6, minute.UTC().Format("15:04"))
		case i%10 == 0:
			fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%.1f" text-anchor="%s">%s</text>`,
				x+barW/2, height-6, map[bool]string{true: "start", false: "middle"}[i == 0], minute.UTC().Format("15:04"))
		}
	}
	b.WriteString(`</svg><p class="legend">`)
	for _, g := range outcomeGroups {
		fmt.Fprintf(&b, `<span class="legend-key %s"></span>%s `, g.class, g.name)
	}
	b.WriteString(`(UTC, per minute)</p>`)
	return template.HTML(b.String()) // built from numbers, times and fixed names only
}

// niceCeil rounds n up to 1, 2 or 5 times a power of ten.
func niceCeil(n int64) int64 {
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if m*p >= n {
				return m * p
			}
		}
	}
}
