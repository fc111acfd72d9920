package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/geneva-dev/geneva/goclient"
)

// httpSecret signs the demo's requests to its Python endpoint
// (GENEVA_HTTP_SECRET for both).
const httpSecret = "demo-secret"

// pythonSteps is the Python endpoint of py_invoice, from the repository's
// root.
const pythonSteps = "examples/http/python/steps.py"

// httpDemo runs docs/http-steps.md's example: a workflow defined in SQL
// whose three steps are a Python program's HTTP endpoint (standard
// library only), run by the demo's worker as `geneva worker` runs them. It is
// skipped, saying why, without python3 or outside the repository.
func httpDemo(ctx context.Context, env *environment, start time.Time) error {
	env.printf("\nSteps in any language: py_invoice, defined in SQL, its steps served by %s\n\n", pythonSteps)
	python, err := exec.LookPath("python3")
	if err != nil {
		env.printf("(skipped: python3 is not installed)\n")
		return nil
	}
	root, ok := repositoryRoot()
	if !ok {
		env.printf("(skipped: run the demo from the repository to serve %s)\n", pythonSteps)
		return nil
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, python, filepath.Join(root, pythonSteps), fmt.Sprint(port))
	cmd.Env = append(os.Environ(), "GENEVA_HTTP_SECRET="+httpSecret)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", pythonSteps, err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	if err := waitListening(ctx, port); err != nil {
		return err
	}

	definition, err := os.ReadFile(filepath.Join(root, "examples/http/python/py_invoice.json"))
	if err != nil {
		return err
	}
	definition = []byte(strings.ReplaceAll(string(definition), "127.0.0.1:8000", fmt.Sprintf("127.0.0.1:%d", port)))
	if err := env.client.DefineWorkflow(ctx, "py_invoice", json.RawMessage(definition)); err != nil {
		return err
	}
	env.printf("geneva define py_invoice examples/http/python/py_invoice.json (its endpoint on port %d)\n", port)
	id, err := env.client.CreateWorkflow(ctx, "py_invoice", "Invoice", "1001", &goclient.CreateWorkflowOpts{AllowMultiple: true})
	if err != nil {
		return err
	}
	env.printf("select geneva.create_workflow('py_invoice', 'Invoice', '1001') -> %d\n\n", id)
	if err := waitSettled(ctx, env, []int64{id}); err != nil {
		return err
	}
	workflow, err := showWorkflow(ctx, env, id)
	if err != nil {
		return err
	}
	env.printf("\nInvoice 1001 is %s (%s): its lines collected a page a request (a resumable step's cursor),\n"+
		"its charge refused once with 429 and Retry-After, reattempted by the definition's policy.\n",
		workflow.State, time.Since(start).Round(10*time.Millisecond))
	return nil
}

// repositoryRoot finds the repository the demo runs in, from the working
// directory up.
func repositoryRoot() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, pythonSteps)); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitListening waits until something accepts connections on the port.
func waitListening(ctx context.Context, port int) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			return conn.Close()
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return errors.New("the Python endpoint did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
