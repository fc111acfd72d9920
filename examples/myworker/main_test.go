package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/goclient"
	"github.com/geneva-dev/geneva/internal/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// The worker binary runs its workflow's first step and stops when told.
func TestRun(t *testing.T) {
	conf := dbtest.NewConfig(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, conf.URL()) }()

	client := goclient.New(dbtest.NewPoolConfig(t, conf))
	var id int64
	require.Eventually(t, func() bool { // once the worker has defined Welcome
		var err error
		id, err = client.CreateWorkflow(context.Background(), "Welcome", "User", "42", nil)
		return err == nil
	}, 10*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool {
		workflow, err := client.GetWorkflow(context.Background(), id)
		require.NoError(t, err)
		return workflow.NextStepName != nil && *workflow.NextStepName == "send_tips"
	}, 10*time.Second, 20*time.Millisecond)

	cancel()
	require.NoError(t, <-done)
}
