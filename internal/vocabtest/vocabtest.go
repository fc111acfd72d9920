// Package vocabtest helps the vocabulary tests pin Go's string constants to
// the SQL that owns their values (a CHECK, a function's body, a table of
// effects), reading both sides from their sources: the Go constants from the
// package's own files, so that a constant added to the source and to no list
// is compared too.
package vocabtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Constants returns the values of the constants declared with the string type
// typeName (`X typeName = "x"` or `X = typeName("x")`) in the non-test Go
// files of the directory dir, in source order. It fails the test when there is
// none, or when one is declared with typeName and a value that is not a
// string literal.
func Constants(t testing.TB, dir, typeName string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File // os.ReadDir sorts them by name
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}

	var values []string
	for _, f := range files {
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, value := range vs.Values {
					lit, typed := literalOf(vs.Type, value, typeName)
					if !typed {
						continue
					}
					s, err := strconv.Unquote(lit)
					if lit == "" || err != nil {
						t.Fatalf("%s: constant %s of type %s is not a string literal", fset.Position(value.Pos()), vs.Names[i], typeName)
					}
					values = append(values, s)
				}
			}
		}
	}
	if len(values) == 0 {
		t.Fatalf("no constant of type %s in %s", typeName, dir)
	}
	return values
}

// literalOf tells whether a constant of declared type typ (nil: none) and
// value is of type typeName, and if so returns its string literal ("" when
// the value is something else).
func literalOf(typ, value ast.Expr, typeName string) (string, bool) {
	if ident, ok := typ.(*ast.Ident); ok {
		if ident.Name != typeName {
			return "", false
		}
		if lit, ok := value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			return lit.Value, true
		}
		return "", true
	}
	call, ok := value.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return "", false
	}
	if fun, ok := call.Fun.(*ast.Ident); !ok || fun.Name != typeName {
		return "", false
	}
	if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
		return lit.Value, true
	}
	return "", true
}

// Quoted lists the single-quoted words of s (SQL's literals, as
// pg_get_constraintdef and pg_get_functiondef print them), in order, once
// each.
func Quoted(s string) []string {
	var words []string
	for _, m := range quotedWord.FindAllStringSubmatch(s, -1) {
		if !slices.Contains(words, m[1]) {
			words = append(words, m[1])
		}
	}
	return words
}

var quotedWord = regexp.MustCompile(`'([a-z_]+)'`)
