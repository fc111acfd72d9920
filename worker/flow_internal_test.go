package worker

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/protocol"
)

// The worker's signals are the protocol's (which a test pins to what
// geneva.complete_step accepts): the executor passes them on as they are.
func TestSignalsAreTheProtocols(t *testing.T) {
	t.Parallel()
	var signals []protocol.Signal
	for _, s := range []Signal{SignalCancel, SignalFinished, SignalPause, SignalReattempt,
		SignalReattemptRewind, SignalSkip, SignalSuccess, SignalSuspend} {
		signals = append(signals, protocol.Signal(s))
	}
	require.ElementsMatch(t, protocol.Signals, signals)
}
