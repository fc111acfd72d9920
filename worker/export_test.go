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

// Test signals of the maintenance rounds (periodic.signal), set before
// Start: tests wait on them rather than sleep.

// HousekeepingCheck is what one of a worker's housekeeping checks did.
type HousekeepingCheck = housekeepingCheck

// ScheduleFiring is what one of a worker's schedule firings did.
type ScheduleFiring = firing

// SignalHousekeeping makes w's housekeeper send each check it makes to
// checks (dropped when checks is full). Workers may share checks.
func SignalHousekeeping(w *Worker, checks chan<- HousekeepingCheck) { w.housekeeper.signal = checks }

// SignalFiring makes w's schedule firer send each firing to firings (see
// SignalHousekeeping).
func SignalFiring(w *Worker, firings chan<- ScheduleFiring) { w.firer.signal = firings }

// HousekeepingStopped is closed once w's housekeeping checks have ended.
func HousekeepingStopped(w *Worker) <-chan struct{} { return w.housekeeper.Stopped() }
