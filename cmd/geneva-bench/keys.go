package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// The keyed-send run measures what an event key costs its sender (issue 49:
// send_event's p_key, no more than 10% over sending without one): the same
// events sent to the same workflows with a key each and without, round after
// round, each round's two halves in alternating order, so that both meet the
// same load and the same growing events table.

// keyedEvent is the event the keyed-send run sends: no step awaits it, so
// each send records an event row and makes nothing due.
const keyedEvent = "bench.note"

// keyedRounds are the keyed-send run's rounds (each: the events sent without
// keys and with).
const keyedRounds = 3

// keyedResults are the keyed-send run at one durability: per round, the
// events per second sent without keys and with.
type keyedResults struct {
	workflows int
	unkeyed   []float64
	keyed     []float64
	// their totals: events and the time they took
	unkeyedEvents, keyedEvents int
	unkeyedTook, keyedTook     time.Duration
}

// keyedSends creates -keyed-workflows BenchAwait workflows (their step
// awaits "go", which never comes: no worker runs) and sends -keyed-sends
// events of keyedEvent to them (round-robin) without keys and as many with a
// key each (never one they had), keyedRounds times, from -await-conns
// connections, -await-per-tx a transaction (one statement each, the same
// for both: the keys NULL without), then cancels the workflows.
func (b *bench) keyedSends(ctx context.Context, p *profileResults) error {
	n, sends := b.o.keyedWorkflows, b.o.keyedSends
	if n <= 0 || sends <= 0 {
		return nil
	}
	if err := b.settle(ctx); err != nil {
		return err
	}
	_, _, ids, err := b.createAwaiting(ctx, n)
	if err != nil {
		return err
	}
	targets := make([]int64, sends)
	for i := range targets {
		targets[i] = ids[i%len(ids)]
	}
	r := keyedResults{workflows: n}
	for round := range keyedRounds {
		for half := range 2 {
			keyed := (round+half)%2 == 1   // unkeyed first in even rounds
			keys := make([]*string, sends) // NULL: no key
			if keyed {
				for i := range keys {
					key := fmt.Sprintf("delivery-%d-%d", round, i)
					keys[i] = &key
				}
			}
			start := time.Now()
			if err := b.sendKeyed(ctx, targets, keys); err != nil {
				return err
			}
			took := time.Since(start)
			rate := float64(sends) / took.Seconds()
			if keyed {
				r.keyed, r.keyedEvents, r.keyedTook = append(r.keyed, rate), r.keyedEvents+sends, r.keyedTook+took
			} else {
				r.unkeyed, r.unkeyedEvents, r.unkeyedTook = append(r.unkeyed, rate), r.unkeyedEvents+sends, r.unkeyedTook+took
			}
		}
	}
	var recorded int
	err = b.pool.QueryRow(ctx, `select count(*) from geneva.events
		where workflow_id = any ($1) and name = $2`, ids, keyedEvent).Scan(&recorded)
	b.ownPolls.Add(1)
	if err == nil && recorded != 2*keyedRounds*sends {
		err = fmt.Errorf("the keyed-send run recorded %d events of %d", recorded, 2*keyedRounds*sends)
	}
	if err != nil {
		return err
	}
	if _, err := b.pool.Exec(ctx, "select geneva.cancel_workflow(id) from unnest($1::bigint[]) as id", ids); err != nil {
		return err
	}
	b.ownPolls.Add(1)
	p.keyed = r
	fmt.Fprintf(os.Stderr, "geneva-bench: %s: send_event, %d events to %d workflows: without keys %.0f events/s, with keys %.0f (%s)\n",
		p.name, sends, n, r.rate(false), r.rate(true), r.costText())
	return nil
}

// sendKeyed sends keyedEvent to each target with its key (NULL: none): the
// targets split in -await-conns runs of neighbours, each sent from a
// connection of its own in transactions of -await-per-tx events, one
// statement each.
func (b *bench) sendKeyed(ctx context.Context, targets []int64, keys []*string) error {
	conns := max(b.o.awaitConns, 1)
	perTx := max(b.o.awaitPerTx, 1)
	share := (len(targets) + conns - 1) / conns
	errs := make(chan error, conns)
	var wg sync.WaitGroup
	for from := 0; from < len(targets); from += share {
		to := min(from+share, len(targets))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := from; done < to; done += perTx {
				end := min(done+perTx, to)
				var sent int
				err := b.pool.QueryRow(ctx, `select count(*) from unnest($1::bigint[], $3::text[]) as t (id, key)
					where geneva.send_event(t.id, $2, null, t.key)`, targets[done:end], keyedEvent, keys[done:end]).Scan(&sent)
				if err == nil && sent != end-done {
					err = fmt.Errorf("send_event recorded %d of %d events", sent, end-done)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs // nil when none failed
}

// rate is the events per second over every round, with keys or without.
func (r keyedResults) rate(keyed bool) float64 {
	if keyed {
		if r.keyedTook <= 0 {
			return 0
		}
		return float64(r.keyedEvents) / r.keyedTook.Seconds()
	}
	if r.unkeyedTook <= 0 {
		return 0
	}
	return float64(r.unkeyedEvents) / r.unkeyedTook.Seconds()
}

// cost is what a key adds to a send: the time per event with keys over the
// time without, less one (0.05: 5% more).
func (r keyedResults) cost() float64 {
	if r.rate(true) == 0 {
		return 0
	}
	return r.rate(false)/r.rate(true) - 1
}

func (r keyedResults) costText() string {
	return fmt.Sprintf("a key costs %+.1f%% a send", 100*r.cost())
}

// keyedText is the row's value: both rates, the cost, and each round's.
func (r keyedResults) keyedText() string {
	if r.keyedEvents == 0 {
		return "—"
	}
	rounds := make([]string, len(r.keyed))
	for i := range r.keyed {
		rounds[i] = fmt.Sprintf("%.0f / %.0f", r.unkeyed[i], r.keyed[i])
	}
	return fmt.Sprintf("%.0f / %.0f (**%s**; rounds: %s)", r.rate(false), r.rate(true), r.costText(), strings.Join(rounds, ", "))
}

func keyedRows(o options, row func(label string, value func(p *profileResults) string)) {
	if o.keyedWorkflows <= 0 || o.keyedSends <= 0 {
		return
	}
	row(fmt.Sprintf("send_event without a key / with one, events/s (%d events to %d workflows, %d rounds each; bar: a key costs ≤ 10%%)", o.keyedSends, o.keyedWorkflows, keyedRounds),
		func(p *profileResults) string { return p.keyed.keyedText() })
}

// keyedProse says how the keyed-send row was measured.
func keyedProse(o options) string {
	if o.keyedWorkflows <= 0 || o.keyedSends <= 0 {
		return ""
	}
	return fmt.Sprintf("The send_event row measures what an event key (`p_key`, [docs/events.md](../docs/events.md)) costs its sender, after each column's other runs, on its settings, after a VACUUM and a CHECKPOINT: "+
		"%d workflows whose step awaits another event (no worker runs) receive %d events of a name no step awaits (each send records an event row and makes nothing due), "+
		"round-robin, once without keys and once with a key each (never one the workflow had), %d rounds, the two halves' order alternating from round to round (without keys first in the first); "+
		"%d connections send them, %d a transaction, each transaction one statement calling `geneva.send_event` for each of its events (the same statement both ways: its keys NULL without). "+
		"Events/s is each half's events over its time, pooled over the rounds (each round's after it, without / with); a key's cost is the time a send with a key takes over one without, less one.\n\n",
		o.keyedWorkflows, o.keyedSends, keyedRounds, o.awaitConns, o.awaitPerTx)
}
