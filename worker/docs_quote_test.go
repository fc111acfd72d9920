package worker_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireDocQuotes checks that the docs page quotes the example file's lines
// between its "// docs:name:begin" and "\t// docs:name:end" markers, one tab
// less indented, as a Go code block.
func requireDocQuotes(t *testing.T, exampleFile, page, name string) {
	t.Helper()
	example, err := os.ReadFile(exampleFile)
	require.NoError(t, err)
	doc, err := os.ReadFile(page)
	require.NoError(t, err)
	text := string(example)
	beginMarker := "// docs:" + name + ":begin\n"
	begin := strings.Index(text, beginMarker)
	end := strings.Index(text, "\t// docs:"+name+":end")
	require.True(t, begin >= 0 && end > begin, "no docs:%s markers in %s", name, exampleFile)
	var lines []string
	for _, line := range strings.Split(strings.TrimRight(text[begin+len(beginMarker):end], "\n"), "\n") {
		lines = append(lines, strings.TrimPrefix(line, "\t"))
	}
	require.Contains(t, string(doc), "```go\n"+strings.Join(lines, "\n")+"\n```", "%s no longer quotes %s", page, exampleFile)
}

// docs/children.md quotes ExampleStep_StartChildren_everyAccount.
func TestDocsQuoteFanOutExample(t *testing.T) {
	t.Parallel()
	requireDocQuotes(t, "example_fanout_test.go", "../docs/children.md", "fanout")
}
