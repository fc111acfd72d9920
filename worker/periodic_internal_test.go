package worker

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The runner's rounds, observed through its test signal: the first at Start,
// the next after each wait; Stop cancels a round under way and returns once
// it ended; a stopped runner starts again.
func TestPeriodic(t *testing.T) {
	t.Parallel()
	receive := func(t *testing.T, signal <-chan int) int {
		t.Helper()
		select {
		case n := <-signal:
			return n
		case <-time.After(10 * time.Second):
			require.FailNow(t, "no round")
			return 0
		}
	}

	t.Run("FirstRoundAtStartThenEveryWait", func(t *testing.T) {
		t.Parallel()
		var rounds atomic.Int32
		signal := make(chan int, 10)
		p := &periodic[int]{
			round:  func(context.Context) int { return int(rounds.Add(1)) },
			wait:   func(context.Context) time.Duration { return time.Millisecond },
			signal: signal,
		}
		require.NoError(t, p.Start(t.Context()))
		require.Equal(t, 1, receive(t, signal))
		require.Equal(t, 2, receive(t, signal))
		p.Stop()
		<-p.Stopped()
	})

	t.Run("FirstRoundAtOnce", func(t *testing.T) {
		t.Parallel()
		signal := make(chan int, 10)
		p := &periodic[int]{
			round:  func(context.Context) int { return 1 },
			wait:   func(context.Context) time.Duration { return time.Hour },
			signal: signal,
		}
		require.NoError(t, p.Start(t.Context()))
		require.Equal(t, 1, receive(t, signal), "the first round does not wait")
		p.Stop()
		require.Empty(t, signal, "the next round waits its hour")
	})

	t.Run("StopCancelsTheRoundUnderWayAndWaitsForIt", func(t *testing.T) {
		t.Parallel()
		entered := make(chan struct{})
		var ended atomic.Bool
		p := &periodic[int]{
			round: func(ctx context.Context) int {
				close(entered)
				<-ctx.Done()
				ended.Store(true)
				return 0
			},
			wait: func(context.Context) time.Duration { return time.Hour },
		}
		require.NoError(t, p.Start(t.Context()))
		<-entered
		p.Stop()
		require.True(t, ended.Load(), "Stop returns after the round")
		select {
		case <-p.Stopped():
		default:
			require.Fail(t, "Stopped is closed after Stop")
		}
		p.Stop() // twice: nothing
	})

	t.Run("StartsAgainAfterStop", func(t *testing.T) {
		t.Parallel()
		signal := make(chan int, 10)
		p := &periodic[int]{
			round:  func(context.Context) int { return 1 },
			wait:   func(context.Context) time.Duration { return time.Hour },
			signal: signal,
		}
		p.Stop() // never started: nothing
		<-p.Stopped()
		for range 2 {
			require.NoError(t, p.Start(t.Context()))
			require.NoError(t, p.Start(t.Context()), "starting a running one does nothing")
			receive(t, signal)
			p.Stop()
		}
		require.Empty(t, signal, "one round a Start")
	})

	t.Run("StartsAgainAfterItsContextEnded", func(t *testing.T) {
		t.Parallel()
		signal := make(chan int, 10)
		p := &periodic[int]{
			round:  func(context.Context) int { return 1 },
			wait:   func(context.Context) time.Duration { return time.Hour },
			signal: signal,
		}
		ctx, cancel := context.WithCancel(t.Context())
		require.NoError(t, p.Start(ctx))
		receive(t, signal)
		cancel()
		<-p.Stopped()
		require.ErrorIs(t, p.Start(ctx), context.Canceled)
		require.NoError(t, p.Start(t.Context()))
		receive(t, signal)
		p.Stop()
	})

	t.Run("AFullSignalDropsAndNeverBlocks", func(t *testing.T) {
		t.Parallel()
		var rounds atomic.Int32
		three := make(chan struct{})
		p := &periodic[int]{
			round: func(context.Context) int {
				if rounds.Add(1) == 3 {
					close(three)
				}
				return 0
			},
			wait:   func(context.Context) time.Duration { return 0 },
			signal: make(chan int), // never read
		}
		require.NoError(t, p.Start(t.Context()))
		select {
		case <-three: // rounds go on though nobody reads their signal
		case <-time.After(10 * time.Second):
			require.FailNow(t, "a signal nobody reads blocks the rounds")
		}
		p.Stop()
	})
}
