package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/geneva-dev/geneva/goclient"
)

// The awaited-step runs measure what a step that awaits an event costs
// (StepOpts.Await): BenchAwait workflows are created, each with its one step
// awaiting the event "go" for up to an hour (its River job scheduled for
// then); once every one awaits, the events are sent, and the worker runs the
// steps they make due.

// awaitEvent is the event BenchAwait's step awaits.
const awaitEvent = "go"

// awaitResults are the awaited-step runs at one durability.
type awaitResults struct {
	// the steady run: events sent one per transaction at a steady rate
	offered  int     // events per second
	achieved float64 // events per second, over the sending
	started  latency // the sender's commit seen → the step's started_at
	send     latency // the send_event call, one per transaction

	// the burst: every event sent at once
	burst     runStats      // its steps, from the first event sent to the last awaited step's end
	burstSend time.Duration // sending them all: the first transaction's start to the last one's commit
}

// awaitSteady sends the events of -await-rate × -await-for awaiting
// workflows one per transaction at -await-rate a second, from up to eight
// connections at once, and measures the time from each send_event's commit,
// as its sender sees it return, to its step's started_at.
func (b *bench) awaitSteady(ctx context.Context, p *profileResults) error {
	n := int(float64(b.o.awaitRate) * b.o.awaitFor.Seconds())
	if n <= 0 {
		return nil
	}
	if err := b.settle(ctx); err != nil {
		return err
	}
	first, last, ids, err := b.createAwaiting(ctx, n)
	if err != nil {
		return err
	}
	config := b.childConfig("geneva", b.o.workers, b.o.inlineSteps)
	config.await = true
	worker, err := startChild(config)
	if err != nil {
		return err
	}

	client := goclient.New(b.pool)
	var (
		sent      = make(map[int64]time.Time, n) // when each send_event returned
		calls     = make([]time.Duration, 0, n)
		mu        sync.Mutex
		sendErr   error
		inFlight  = make(chan struct{}, 8)
		wg        sync.WaitGroup
		perSecond = float64(b.o.awaitRate)
		tick      = 10 * time.Millisecond
		ticker    = time.NewTicker(tick)
		owed      float64
		next      int
		start     = time.Now()
	)
	send := func(id int64) {
		defer wg.Done()
		defer func() { <-inFlight }()
		before := time.Now()
		ok, err := client.SendEvent(ctx, id, awaitEvent, nil)
		after := time.Now()
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
			sendErr = err
		case !ok:
			sendErr = fmt.Errorf("send_event(%d) found the workflow ended", id)
		default:
			sent[id] = after
			calls = append(calls, after.Sub(before))
		}
	}
	// Every workflow gets its event: a sender that falls behind the rate
	// catches up, and the achieved rate says so.
	for range ticker.C {
		owed += perSecond * tick.Seconds()
		for ; owed >= 1 && next < len(ids); owed-- {
			inFlight <- struct{}{}
			wg.Add(1)
			go send(ids[next])
			next++
		}
		if next == len(ids) {
			break
		}
	}
	ticker.Stop()
	wg.Wait()
	took := time.Since(start)
	if sendErr != nil {
		_, _, _ = worker.stop()
		return sendErr
	}
	err = b.waitFinished(ctx, "BenchAwait", 5*time.Minute)
	if _, _, stopErr := worker.stop(); err == nil {
		err = stopErr
	}
	if err != nil {
		return err
	}
	if err := b.checkConsumed(ctx, first, last, n); err != nil {
		return err
	}

	rows, err := b.pool.Query(ctx, `select workflow_id, started_at from geneva.step_executions
		where workflow_id between $1 and $2 and step_name = 'await' and started_at is not null`, first, last)
	if err != nil {
		return err
	}
	lags := make([]time.Duration, 0, n)
	for rows.Next() {
		var (
			id      int64
			started time.Time
		)
		if err := rows.Scan(&id, &started); err != nil {
			rows.Close()
			return err
		}
		lags = append(lags, started.Sub(sent[id]))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	b.ownPolls.Add(1)

	p.await.offered = b.o.awaitRate
	p.await.achieved = float64(n) / took.Seconds()
	p.await.started = percentiles(lags)
	p.await.send = percentiles(calls)
	fmt.Fprintf(os.Stderr, "geneva-bench: %s: awaited step, %d events at %d/s (achieved %.0f): sent → started %s; send_event %s\n",
		p.name, n, b.o.awaitRate, p.await.achieved, p.await.started, p.await.send)
	return nil
}

// awaitBurst creates -await-burst awaiting workflows and, once every one
// awaits and a worker with -workers slots runs, sends all their events at
// once from -await-conns connections, -await-per-tx a transaction (one
// statement each), and measures the steps from the first event sent to the
// last awaited step's end (the database's clock).
func (b *bench) awaitBurst(ctx context.Context, p *profileResults) error {
	n := b.o.awaitBurst
	if n <= 0 {
		return nil
	}
	first, last, ids, err := b.createAwaiting(ctx, n)
	if err != nil {
		return err
	}
	config := b.childConfig("geneva", b.o.workers, b.o.inlineSteps)
	config.await = true
	var sendTook time.Duration
	stats, err := b.measure(ctx, config, func(ctx context.Context) (int, time.Duration, error) {
		start := time.Now()
		if err := b.sendAll(ctx, ids); err != nil {
			return 0, 0, err
		}
		sendTook = time.Since(start)
		if err := b.waitFinished(ctx, "BenchAwait", 10*time.Minute); err != nil {
			return 0, 0, err
		}
		var seconds float64
		err := b.pool.QueryRow(ctx, `select extract(epoch from
			  (select max(finished_at) from geneva.step_executions where workflow_id between $1 and $2 and step_name = 'await')
			  - (select min(sent_at) from geneva.events where workflow_id between $1 and $2))::float8`,
			first, last).Scan(&seconds)
		b.ownPolls.Add(1)
		return n, time.Duration(seconds * float64(time.Second)), err
	})
	if err != nil {
		return err
	}
	if err := b.checkConsumed(ctx, first, last, n); err != nil {
		return err
	}
	p.await.burst, p.await.burstSend = stats, sendTook
	fmt.Fprintf(os.Stderr, "geneva-bench: %s: %d events at once: %.0f steps/s (sent in %s; %.2f commits, %.0f WAL bytes per step)\n",
		p.name, n, stats.rate(), sendTook.Round(time.Millisecond), stats.commitsPerUnit(), stats.walPerUnit())
	return nil
}

// sendAll sends the event to every workflow: the ids split in -await-conns
// runs of neighbours, each sent from a connection of its own in
// transactions of -await-per-tx events, one statement each.
func (b *bench) sendAll(ctx context.Context, ids []int64) error {
	conns := max(b.o.awaitConns, 1)
	perTx := max(b.o.awaitPerTx, 1)
	share := (len(ids) + conns - 1) / conns
	errs := make(chan error, conns)
	var wg sync.WaitGroup
	for from := 0; from < len(ids); from += share {
		mine := ids[from:min(from+share, len(ids))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < len(mine); done += perTx {
				chunk := mine[done:min(done+perTx, len(mine))]
				var sent int
				err := b.pool.QueryRow(ctx, `select count(*) from unnest($1::bigint[]) as id
					where geneva.send_event(id, $2)`, chunk, awaitEvent).Scan(&sent)
				if err == nil && sent != len(chunk) {
					err = fmt.Errorf("send_event found %d of %d workflows ended", len(chunk)-sent, len(chunk))
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

// createAwaiting creates n BenchAwait workflows (a hundred a call)
// and waits until each one's step awaits its event (geneva.awaiting_events).
func (b *bench) createAwaiting(ctx context.Context, n int) (first, last int64, ids []int64, err error) {
	if first, last, err = b.createBatch(ctx, "BenchAwait", n, nil); err != nil {
		return 0, 0, nil, err
	}
	rows, err := b.pool.Query(ctx, `select id from geneva.workflows
		where workflow_type = 'BenchAwait' and id between $1 and $2 order by id`, first, last)
	if err == nil {
		ids, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	}
	if err != nil {
		return 0, 0, nil, err
	}
	b.ownPolls.Add(1)
	if len(ids) != n {
		return 0, 0, nil, fmt.Errorf("created %d BenchAwait workflows, found %d", n, len(ids))
	}
	deadline := time.Now().Add(time.Minute)
	for {
		var awaiting int
		err := b.pool.QueryRow(ctx, `select count(*) from geneva.awaiting_events
			where workflow_type = 'BenchAwait' and workflow_id between $1 and $2 and event = $3`,
			first, last, awaitEvent).Scan(&awaiting)
		if err != nil {
			return 0, 0, nil, err
		}
		b.ownPolls.Add(1)
		if awaiting == n {
			return first, last, ids, nil
		}
		if time.Now().After(deadline) {
			return 0, 0, nil, fmt.Errorf("%d of %d BenchAwait workflows await their event after a minute", awaiting, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkConsumed checks that every awaited step of workflows first..last
// completed with its event (none ran on its timeout).
func (b *bench) checkConsumed(ctx context.Context, first, last int64, n int) error {
	var consumed int
	err := b.pool.QueryRow(ctx, `select count(*) from geneva.step_executions
		where workflow_id between $1 and $2 and step_name = 'await' and state = 'completed' and event_id is not null`,
		first, last).Scan(&consumed)
	b.ownPolls.Add(1)
	if err == nil && consumed != n {
		err = fmt.Errorf("%d of %d awaited steps completed with their event", consumed, n)
	}
	return err
}
