package geneva_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

var (
	// [text](target): a Markdown inline link, once code is removed.
	markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// `code`, whose brackets are not links
	inlineCode = regexp.MustCompile("`[^`\n]*`")
	// a URL with a scheme (https:, mailto:): not a file of the repository
	withScheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// docPages are the README and the pages of docs/, which link each other.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md"}, pages...)
}

// markdownProse is a page's lines, those of fenced code blocks blank.
func markdownProse(text string) []string {
	lines := strings.Split(text, "\n")
	fenced := false
	for i, line := range lines {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			lines[i] = ""
		} else if fenced {
			lines[i] = ""
		}
	}
	return lines
}

// headingAnchors are the anchors GitHub gives a page's headings: lower case,
// without punctuation, spaces as hyphens, a repeated one numbered.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	for _, line := range markdownProse(text) {
		trimmed := strings.TrimLeft(line, "#")
		if trimmed == line || !strings.HasPrefix(trimmed, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(trimmed)) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		anchor := b.String()
		for n := 1; anchors[anchor]; n++ {
			anchor = b.String() + "-" + strconv.Itoa(n)
		}
		anchors[anchor] = true
	}
	return anchors
}

// TestDocsLinks: every relative link of the README and of docs/*.md names a
// file or folder of the repository, and its #anchor, if any, a heading of
// that page.
func TestDocsLinks(t *testing.T) {
	t.Parallel()
	anchorsOf := map[string]map[string]bool{}
	anchors := func(page string) map[string]bool {
		if a, ok := anchorsOf[page]; ok {
			return a
		}
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		anchorsOf[page] = headingAnchors(string(text))
		return anchorsOf[page]
	}

	links := 0
	for _, page := range docPages(t) {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range markdownProse(string(text)) {
			for _, m := range markdownLink.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if withScheme.MatchString(target) {
					continue
				}
				links++
				file, anchor, _ := strings.Cut(target, "#")
				path := page
				if file != "" {
					path = filepath.Join(filepath.Dir(page), file)
					if _, err := os.Stat(path); err != nil {
						t.Errorf("%s:%d: %s names no file of the repository (%s)", page, i+1, target, path)
						continue
					}
				}
				if anchor != "" {
					if !strings.HasSuffix(path, ".md") {
						t.Errorf("%s:%d: %s: an anchor of a file that is not Markdown", page, i+1, target)
					} else if !anchors(path)[anchor] {
						t.Errorf("%s:%d: %s: %s has no heading #%s", page, i+1, target, path, anchor)
					}
				}
			}
		}
	}
	if links < 100 {
		t.Fatalf("only %d relative links found: the parsing broke", links)
	}
}

// TestDocsIndex: docs/README.md links every page of docs/, and each page
// opens with its title.
func TestDocsIndex(t *testing.T) {
	t.Parallel()
	index, err := os.ReadFile("docs/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range docPages(t) {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(text), "# ") {
			t.Errorf("%s does not open with its title (# ...)", page)
		}
		name := filepath.Base(page)
		if name != "README.md" && !strings.Contains(string(index), "]("+name+")") {
			t.Errorf("docs/README.md does not link %s", name)
		}
	}
}
