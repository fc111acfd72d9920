package tests

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/geneva-dev/geneva/internal/dbtest"
)

// cellsWalkthroughHeading is the section of docs/cells.md whose sh blocks
// TestCellsWalkthrough runs.
const cellsWalkthroughHeading = "## From one database to a router and two cells"

// TestCellsWalkthrough runs docs/cells.md's walk-through as written: its sh
// blocks, in order, in one bash with -euo pipefail, on the test server
// (SERVER, the blocks' default, given), geneva and the demo built by the
// test (the first block's go install). The demo's worker runs on each cell
// and the CLI drives its webhooks through the router.
func TestCellsWalkthrough(t *testing.T) {
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dbtest.ServerURL())
	require.NoError(t, err)
	var available bool
	require.NoError(t, admin.QueryRow(ctx,
		"select exists (select from pg_available_extensions where name = 'plproxy')").Scan(&available))
	if !available {
		if os.Getenv("CI") == "true" {
			t.Fatal("PL/Proxy is not installed, and CI=true (.ci/run installs Debian's postgresql-15-plproxy)")
		}
		t.Skip("SKIP: PL/Proxy is not installed (apt-get install postgresql-15-plproxy): the walk-through is not run; it fails instead when CI=true")
	}
	doc, err := os.ReadFile("../docs/cells.md")
	require.NoError(t, err)
	text := string(doc)
	start := strings.Index(text, "\n"+cellsWalkthroughHeading+"\n")
	require.NotEqual(t, -1, start, "docs/cells.md has the section %q", cellsWalkthroughHeading)
	section := text[start+1:]
	if end := strings.Index(section[len(cellsWalkthroughHeading):], "\n## "); end != -1 {
		section = section[:len(cellsWalkthroughHeading)+end]
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(section, -1) {
		blocks = append(blocks, m[1])
	}
	require.GreaterOrEqual(t, len(blocks), 5)
	require.Contains(t, blocks[0], "go install ./cmd/geneva ./examples/demo", "the first block installs geneva and the demo")

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	for name, pkg := range map[string]string{"geneva": "./cmd/geneva", "demo": "./examples/demo"} {
		build := exec.Command("go", "build", "-o", filepath.Join(bin, name), pkg)
		build.Dir = ".."
		out, err := build.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	psql := requirePsql(t)

	// the server's URL without a database, and the walk-through's databases
	// dropped before and after
	server, err := url.Parse(dbtest.ServerURL())
	require.NoError(t, err)
	// (the walk-through appends a database to the server's URL: its
	// sslmode goes by the environment)
	sslmode := server.Query().Get("sslmode")
	server.Path, server.RawQuery = "", ""
	drop := func() {
		for _, db := range []string{"cell1", "cell2", "router"} {
			_, _ = admin.Exec(ctx, "drop database if exists "+db+" with (force)")
		}
	}
	drop()
	t.Cleanup(func() { drop(); admin.Close(ctx) })

	script := "set -euo pipefail\n" + strings.Join(blocks[1:], "\n")
	runCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(runCtx, "bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + bin + ":" + filepath.Dir(psql) + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + dir, "LANG=C.UTF-8", "SERVER=" + server.String(),
	}
	if sslmode != "" {
		cmd.Env = append(cmd.Env, "PGSSLMODE="+sslmode)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	logs, _ := exec.Command("bash", "-c", "tail -n 20 "+dir+"/cell*-worker.log").CombinedOutput()
	require.NoError(t, err, "the walk-through:\n%s\nthe workers' logs:\n%s", out, logs)

	output := string(out)
	require.Contains(t, output, "Router: 4 partitions on 2 cells")
	require.Regexp(t, `WebhookDelivery\s+0\s+0\s+0\s+20\s+0`, output, "geneva ls: the 20 webhooks finished")
	require.Regexp(t, `(?m)^cell1\|finished\|\d+$`, output, "cell1 ran some")
	require.Regexp(t, `(?m)^cell2\|finished\|\d+$`, output, "cell2 ran some")
}
