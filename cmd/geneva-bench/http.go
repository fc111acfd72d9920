package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/geneva-dev/geneva/goclient"
)

// The HTTP-step runs measure what a step costs when it is an HTTP step
// (worker.HTTPConfig, the stock `geneva worker`): BenchHTTP has -steps HTTP
// steps, each a POST to a local endpoint (in this process) that replies 204
// at once; a worker that runs HTTP steps (signing every request) works them
// beside the same number of Bench workflows' no-op Go steps, run just before
// by the same kind of worker.

// httpResults are the HTTP-step runs at one durability.
type httpResults struct {
	goSteps, httpSteps runStats
}

// httpEndpoint serves BenchHTTP's steps: 204 for every request, after
// reading its body (as an endpoint must, to check its signature).
func httpEndpoint() (url string, stop func(), err error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	server := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var body json.RawMessage
			_ = json.NewDecoder(r.Body).Decode(&body)
			w.WriteHeader(http.StatusNoContent)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go server.Serve(listener) //nolint:errcheck // ends with Close
	return "http://" + listener.Addr().String() + "/noop", func() { _ = server.Close() }, nil
}

// httpRuns runs -http-workflows BenchHTTP workflows, and as many Bench ones
// before them, each with a worker of -workers slots that runs HTTP steps.
func (b *bench) httpRuns(ctx context.Context, p *profileResults) error {
	n := b.o.httpWorkflows
	if n <= 0 {
		return nil
	}
	url, stop, err := httpEndpoint()
	if err != nil {
		return err
	}
	defer stop()
	steps := make([]string, b.o.steps)
	for i := range steps {
		steps[i] = fmt.Sprintf(`{"name": "s%d", "http": {"url": %q}}`, i+1, url)
	}
	if err := goclient.New(b.pool).DefineWorkflow(ctx, "BenchHTTP",
		json.RawMessage(`{"steps": [`+strings.Join(steps, ", ")+`]}`)); err != nil {
		return err
	}
	config := b.childConfig("geneva", b.o.workers, b.o.inlineSteps)
	config.http = true
	if p.http.goSteps, _, _, err = b.runWorkflows(ctx, config, "Bench", n, nil); err != nil {
		return err
	}
	if p.http.httpSteps, _, _, err = b.runWorkflows(ctx, config, "BenchHTTP", n, nil); err != nil {
		return err
	}
	return nil
}

func httpRows(o options, row func(label string, value func(p *profileResults) string)) {
	if o.httpWorkflows <= 0 {
		return
	}
	row(fmt.Sprintf("HTTP steps (a local endpoint replying 204, signed requests), %d slots, steps/s (÷ Go no-op steps, run beside)", o.workers),
		func(p *profileResults) string {
			if p.http.httpSteps.units == 0 || p.http.goSteps.rate() == 0 {
				return "—"
			}
			return fmt.Sprintf("%.0f (%.2f × %.0f)", p.http.httpSteps.rate(), p.http.httpSteps.rate()/p.http.goSteps.rate(), p.http.goSteps.rate())
		})
}
