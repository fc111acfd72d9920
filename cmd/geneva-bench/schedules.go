package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// scheduleRow is the cost of geneva.fire_schedules with a number of
// schedules: a call that finds none due (what every worker does every
// second), and one that fires ten.
type scheduleRow struct {
	schedules int
	idle      latency // nothing due
	firing    latency // ten due, fired in one call
}

// fireSchedules measures geneva.fire_schedules with 0, 1,000 and
// -schedules schedules, most not due (a daily cron whose slot is hours away):
// the call every worker makes every second must cost the same whatever
// their number, an index read of the due ones (schedules_due). Ten more,
// due at once (created a minute back under one connection's test clock), are
// fired by one call, twenty times.
func (b *bench) fireSchedules(ctx context.Context) error {
	if b.o.schedules <= 0 {
		return nil
	}
	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "select geneva.allow_fake_clock(true)"); err != nil {
		return err
	}
	defer func() { _, _ = b.pool.Exec(context.WithoutCancel(ctx), "select geneva.allow_fake_clock(false)") }()
	// a daily slot twelve hours from now: never due during the run
	notDue := fmt.Sprintf("%d %d * * *", time.Now().UTC().Minute(), (time.Now().UTC().Hour()+12)%24)
	have := 0
	for _, size := range []int{0, min(1000, b.o.schedules), b.o.schedules} {
		if size < have {
			continue
		}
		fmt.Fprintf(os.Stderr, "geneva-bench: fire_schedules: %d schedules\n", size)
		if _, err := conn.Exec(ctx, `select geneva.create_schedule('bench-' || i, $1, 'BenchCreate', 'Team', i::text)
			from generate_series($2::integer + 1, $3::integer) i`, notDue, have, size); err != nil {
			return err
		}
		have = size
		if _, err := conn.Exec(ctx, "analyze geneva.schedules"); err != nil {
			return err
		}
		row := scheduleRow{schedules: size}
		var idle []time.Duration
		for range 1000 {
			start := time.Now()
			var created int
			if err := conn.QueryRow(ctx, "select geneva.fire_schedules()").Scan(&created); err != nil {
				return err
			}
			idle = append(idle, time.Since(start))
			if created != 0 {
				return fmt.Errorf("fire_schedules created %d workflows of schedules not due", created)
			}
		}
		row.idle = percentiles(idle)
		var firing []time.Duration
		for round := range 20 {
			if _, err := conn.Exec(ctx, "select set_config('geneva.fake_now', (now() - interval '1 minute')::text, false)"); err != nil {
				return err
			}
			if _, err := conn.Exec(ctx, `select geneva.create_schedule('due-' || $1 || '-' || i, '* * * * *', 'BenchCreate', 'Due', $1 || '-' || i,
				p_allow_multiple => true)
				from generate_series(1, 10) i`, fmt.Sprint(round)); err != nil {
				return err
			}
			if _, err := conn.Exec(ctx, "reset geneva.fake_now"); err != nil {
				return err
			}
			start := time.Now()
			var created int
			if err := conn.QueryRow(ctx, "select geneva.fire_schedules()").Scan(&created); err != nil {
				return err
			}
			firing = append(firing, time.Since(start))
			if created != 10 {
				return fmt.Errorf("fire_schedules created %d workflows of 10 schedules due", created)
			}
			if _, err := conn.Exec(ctx, `select geneva.delete_schedule('due-' || $1 || '-' || i)
				from generate_series(1, 10) i`, fmt.Sprint(round)); err != nil {
				return err
			}
		}
		row.firing = percentiles(firing)
		b.r.schedules = append(b.r.schedules, row)
	}
	_, err = conn.Exec(ctx, "select geneva.delete_schedule(name) from geneva.schedule_list where name like 'bench-%'")
	return err
}

// schedulesMarkdown is the section of the results on fire_schedules.
func (r *results) schedulesMarkdown(settings string) string {
	if len(r.schedules) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Firing schedules\n\n")
	fmt.Fprintf(&b, "geneva.fire_schedules, as every worker calls it every second, with schedules none of which is due (1000 calls), and firing ten due ones in one call (20 calls; each creates ten workflows), %s.\n\n", settings)
	b.WriteString("| schedules | nothing due p50 | p99 | ten due p50 | p99 |\n|---|---|---|---|---|\n")
	for _, row := range r.schedules {
		fmt.Fprintf(&b, "| %d | %.3f ms | %.3f ms | %.2f ms | %.2f ms |\n", row.schedules, row.idle.p50, row.idle.p99, row.firing.p50, row.firing.p99)
	}
	b.WriteString("\n")
	return b.String()
}
