package failover_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/pgtemp"
)

// walkthroughHeading is the section of docs/high-availability.md whose sh
// blocks TestWalkthrough runs.
const walkthroughHeading = "## A pair on one machine"

// installBlock is the walk-through's first block, which installs geneva and
// the demo: the test builds them into a directory of its own instead.
const installBlock = "go install ./cmd/geneva ./examples/demo"

// TestWalkthrough runs docs/high-availability.md's walk-through as written:
// its sh blocks, in order, in one bash with -euo pipefail, with ports and a
// directory of the test's own (the blocks' defaults, A_PORT and the others,
// given), geneva and the demo built by the test (the first block's go
// install), and, as root, as the postgres user (PostgreSQL refuses root).
func TestWalkthrough(t *testing.T) {
	skipUnlessAsked(t)
	doc, err := os.ReadFile("../../docs/high-availability.md")
	require.NoError(t, err)
	blocks := shellBlocks(t, string(doc))
	require.GreaterOrEqual(t, len(blocks), 3)
	require.Contains(t, blocks[0], installBlock, "the first block installs geneva and the demo")

	dir, err := os.MkdirTemp("", "geneva-walkthrough-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "bin")
	for name, pkg := range map[string]string{"geneva": "./cmd/geneva", "demo": "./examples/demo"} {
		build := exec.Command("go", "build", "-o", filepath.Join(bin, name), pkg)
		build.Dir = "../.."
		out, err := build.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	initdb, err := pgtemp.Program("initdb")
	require.NoError(t, err)
	if resolved, err := filepath.EvalSymlinks(initdb); err == nil {
		initdb = resolved
	}
	home := filepath.Join(dir, "home")
	require.NoError(t, os.Mkdir(home, 0o755))
	haDir := filepath.Join(home, "ha")

	script := "set -euo pipefail\n" + strings.Join(blocks[1:], "\n")
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = home
	cmd.Env = []string{
		"PATH=" + bin + ":" + filepath.Dir(initdb) + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + home, "LANG=C.UTF-8",
		"A_PORT=" + strconv.Itoa(freePort(t)), "B_PORT=" + strconv.Itoa(freePort(t)),
		"METRICS_PORT=" + strconv.Itoa(freePort(t)), "HA_DIR=" + haDir,
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if os.Geteuid() == 0 {
		pgUser, err := user.Lookup("postgres")
		require.NoError(t, err, "as root, the walk-through runs as the postgres user")
		uid, _ := strconv.Atoi(pgUser.Uid)
		gid, _ := strconv.Atoi(pgUser.Gid)
		require.NoError(t, os.Chown(home, uid, gid))
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	t.Cleanup(func() {
		// whatever a failed run left: its processes, its servers
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		for _, server := range []string{"a", "b"} {
			if _, err := os.Stat(filepath.Join(haDir, server, "postmaster.pid")); err == nil {
				stop := exec.Command(filepath.Join(filepath.Dir(initdb), "pg_ctl"), "-D", filepath.Join(haDir, server), "stop", "-m", "immediate")
				stop.SysProcAttr = &syscall.SysProcAttr{Credential: cmd.SysProcAttr.Credential}
				_ = stop.Run()
			}
		}
		if t.Failed() {
			for _, log := range []string{"worker.log", "metrics.log", "a.log", "b.log"} {
				if body, err := os.ReadFile(filepath.Join(haDir, log)); err == nil {
					t.Logf("%s:\n%s", log, body)
				}
			}
		}
	})
	start := time.Now()
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(3 * time.Minute):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = fmt.Errorf("the walk-through did not end within 3 minutes: %w", <-done)
	}
	require.NoError(t, err, "the walk-through's output:\n%s", out.String())
	t.Logf("the walk-through ran in %s:\n%s", time.Since(start).Round(time.Millisecond), out.String())
	require.Contains(t, out.String(), "finished", "the expense's workflow finished after the failover")
	_, err = os.Stat(haDir)
	require.True(t, os.IsNotExist(err), "the walk-through cleans up")
}

// shellBlocks returns the sh blocks of the walk-through's section.
func shellBlocks(t *testing.T, doc string) []string {
	t.Helper()
	start := strings.Index(doc, "\n"+walkthroughHeading+"\n")
	require.NotEqual(t, -1, start, "docs/high-availability.md has the section %q", walkthroughHeading)
	section := doc[start+1:]
	if end := strings.Index(section[len(walkthroughHeading):], "\n## "); end != -1 {
		section = section[:len(walkthroughHeading)+end]
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1) {
		blocks = append(blocks, m[1])
	}
	return blocks
}

func freePort(t *testing.T) int {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer listener.Close()
	return listener.Addr().(*net.TCPAddr).Port
}
