package worker

import "time"

// Seams for the batching tests (package worker_test), set before Start.

// SetCompleteWindow sets how long w's batches of normal ends wait for more
// after their first. A long window makes a batch close only when it is full
// or holds every running step, so that a test knows which steps share one.
func SetCompleteWindow(w *Worker, window time.Duration) { w.exec.completer.window = window }

// WrapCompleteDB puts wrap's DB between w's completer and the database, to
// make a batch's call fail the way a network would.
func WrapCompleteDB(w *Worker, wrap func(DB) DB) { w.exec.completer.db = wrap(w.exec.completer.db) }

// SetClaimWindow sets how long w's batches of claims wait for more after
// their first (see SetCompleteWindow).
// The claims of one fetch then share a batch once they have all arrived
// within settle.
func SetClaimWindow(w *Worker, window, settle time.Duration) {
	w.exec.claimer.window, w.exec.claimer.settle = window, settle
}

// WrapClaimDB puts wrap's DB between w's claimer and the database (see
// WrapCompleteDB).
func WrapClaimDB(w *Worker, wrap func(DB) DB) { w.exec.claimer.db = wrap(w.exec.claimer.db) }
