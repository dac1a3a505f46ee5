// Command docs checks the repository's Markdown as a newcomer follows it: every relative
// link reaches a file (and a heading, when it names one), every `make <target>` in a code
// span is a target of the Makefile, and every repository path in a code span exists. It also
// writes the API reference, docs/api/, from the operators' CRDs and API packages, and the
// OpenAPI document each operator's REST API serves, docs/api/openapi/<operator>.json.
//
//	docs check [root]
//	docs api [root]
//	docs openapi [root]
//	docs plot TITLE FIGURES.tsv OUT.svg    a benchmark's figures, a panel per metric: bars, or
//	                                       lines against X when each run is named "NAME, X"
package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	if len(os.Args) == 5 && os.Args[1] == "plot" {
		if err := plotFile(os.Args[2], os.Args[3], os.Args[4]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) < 2 || !slices.Contains([]string{"check", "api", "openapi"}, os.Args[1]) {
		fmt.Fprintln(os.Stderr, "usage: docs check|api|openapi [root] | docs plot TITLE FIGURES.tsv OUT.svg")
		os.Exit(2)
	}
	root := "."
	if len(os.Args) > 2 {
		root = os.Args[2]
	}
	if write, ok := map[string]func(string) error{"api": WriteAPIReference, "openapi": WriteOpenAPIDocuments}[os.Args[1]]; ok {
		if err := write(root); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	problems, err := Check(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		fmt.Printf("docs check: %d broken references\n", len(problems))
		os.Exit(1)
	}
}

// plotFile draws the figures in the TSV in as the SVG out.
func plotFile(title, in, out string) error {
	data, err := os.Open(in) //nolint:gosec // a path the Makefile gives
	if err != nil {
		return err
	}
	defer func() { _ = data.Close() }()
	figures, err := ReadFigures(data)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	var svg []byte
	if all, ok := seriesOf(figures); ok {
		svg = PlotLines(title, figures, all)
	} else {
		svg = Plot(title, figures)
	}
	return os.WriteFile(out, svg, 0o644) //nolint:gosec // a document, world-readable
}

// skipped are the folders whose Markdown is not the project's own docs.
var skipped = []string{".git", "bin", ".local", "node_modules", "dist", "bundles", "catalog"}

// Check reads every Markdown file under root and returns what is broken, one line each.
func Check(root string) ([]string, error) {
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return nil, err
	}
	targets := ParseTargets(string(makefile))
	var problems []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && slices.Contains(skipped, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".md") {
			return nil
		}
		text, err := os.ReadFile(path) //nolint:gosec // the repository's own files
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, p := range CheckFile(root, rel, string(text), targets) {
			problems = append(problems, rel+": "+p)
		}
		return nil
	})
	return problems, err
}

// CheckFile checks one Markdown file, at rel under root.
func CheckFile(root, rel, text string, targets Targets) []string {
	var problems []string
	prose := withoutCodeBlocks(text)
	for _, link := range Links(prose) {
		if p := checkLink(root, rel, link); p != "" {
			problems = append(problems, p)
		}
	}
	for _, span := range CodeSpans(prose) {
		for _, target := range MakeTargets(span) {
			if !targets.Has(target) {
				problems = append(problems, fmt.Sprintf("`make %s`: no such target in the Makefile", target))
			}
		}
		if path, ok := RepoPath(span); ok && !exists(root, path) {
			problems = append(problems, fmt.Sprintf("`%s`: no such file or folder in the repository", span))
		}
	}
	return problems
}

// exists says whether path is in the repository at root, or in an operator's tree (an
// operator's `config/default`).
func exists(root, path string) bool {
	if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(path))); err == nil {
		return true
	}
	matches, _ := filepath.Glob(filepath.Join(root, "operators", "*", filepath.FromSlash(path)))
	return len(matches) > 0
}

// checkLink checks a relative link from the file at rel: its file, and its heading.
func checkLink(root, rel, link string) string {
	if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
		return ""
	}
	file, anchor, _ := strings.Cut(link, "#")
	target := rel
	if file != "" {
		target = filepath.Join(filepath.Dir(rel), filepath.FromSlash(file))
	}
	info, err := os.Stat(filepath.Join(root, target))
	if err != nil {
		return fmt.Sprintf("link %s: no such file %s", link, filepath.ToSlash(target))
	}
	if anchor == "" || info.IsDir() || !strings.HasSuffix(target, ".md") {
		return ""
	}
	text, err := os.ReadFile(filepath.Join(root, target)) //nolint:gosec // the repository's own files
	if err != nil {
		return err.Error()
	}
	if !slices.Contains(Anchors(withoutCodeBlocks(string(text))), anchor) {
		return fmt.Sprintf("link %s: %s has no heading #%s", link, filepath.ToSlash(target), anchor)
	}
	return ""
}
