package main

import (
	"regexp"
	"strings"
	"unicode"
)

// withoutCodeBlocks is text with its fenced code blocks blanked: what they hold is an
// example, not a reference.
func withoutCodeBlocks(text string) string {
	lines := strings.Split(text, "\n")
	in := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			lines[i] = ""
			continue
		}
		if in {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

var (
	linkRE = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	spanRE = regexp.MustCompile("`([^`\n]+)`")
)

// Links are the targets of the inline links of text.
func Links(text string) []string {
	matches := linkRE.FindAllStringSubmatch(spanRE.ReplaceAllString(text, ""), -1)
	links := make([]string, 0, len(matches))
	for _, m := range matches {
		links = append(links, m[1])
	}
	return links
}

// CodeSpans are the inline code spans of text.
func CodeSpans(text string) []string {
	matches := spanRE.FindAllStringSubmatch(text, -1)
	spans := make([]string, 0, len(matches))
	for _, m := range matches {
		spans = append(spans, m[1])
	}
	return spans
}

// Anchors are the anchors GitHub gives text's headings: lower case, spaces to hyphens,
// punctuation but hyphens and underscores dropped; a repeated one gets -1, -2, ...
func Anchors(text string) []string {
	var anchors []string
	seen := map[string]int{}
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		heading := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(heading) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors = append(anchors, a+"-"+itoa(n))
		} else {
			anchors = append(anchors, a)
		}
		seen[a]++
	}
	return anchors
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var digits []byte
	for ; n > 0; n /= 10 {
		digits = append([]byte{byte('0' + n%10)}, digits...)
	}
	return string(digits)
}

// MakeTargets are the targets a code span runs with make: `make a b VAR=x` is a and b. A
// placeholder (<name>) is no target.
func MakeTargets(span string) []string {
	var targets []string
	for _, command := range strings.FieldsFunc(span, func(r rune) bool { return r == ';' || r == '&' || r == '|' }) {
		fields := strings.Fields(command)
		for i, f := range fields {
			if f != "make" {
				continue
			}
			for _, arg := range fields[i+1:] {
				if strings.HasPrefix(arg, "-") || strings.Contains(arg, "=") {
					continue
				}
				if strings.ContainsAny(arg, "<>$*.()[]\"'") || arg == "#" {
					break
				}
				targets = append(targets, arg)
			}
			break
		}
	}
	return targets
}

// topLevel are the repository's folders a path in a code span may start with.
var topLevel = []string{"operators/", "bundles/", "catalog/", "shared/", "config/", "hack/", "e2e/", "docs/"}

// RepoPath is the repository path a code span names, if it is one: it starts with a
// top-level folder and holds no placeholder, wildcard or argument.
func RepoPath(span string) (string, bool) {
	if strings.ContainsAny(span, " <>*{}$,=") || strings.Contains(span, "...") {
		return "", false
	}
	for _, t := range topLevel {
		if strings.HasPrefix(span, t) {
			path := strings.TrimRight(span, ".:;")
			path, _, _ = strings.Cut(path, "#")
			return path, true
		}
	}
	return "", false
}

// Targets are a Makefile's targets: names and % patterns.
type Targets struct {
	names    map[string]bool
	patterns []string
}

var ruleRE = regexp.MustCompile(`^([A-Za-z0-9_.%/ -]+?)\s*:([^=]|$)`)

// ParseTargets reads the targets a Makefile defines (variables in them are skipped).
func ParseTargets(makefile string) Targets {
	t := Targets{names: map[string]bool{}}
	for _, l := range strings.Split(makefile, "\n") {
		if strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "#") {
			continue
		}
		m := ruleRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		for _, name := range strings.Fields(m[1]) {
			if strings.Contains(name, "%") {
				t.patterns = append(t.patterns, name)
			} else {
				t.names[name] = true
			}
		}
	}
	return t
}

// Has says whether make knows target: a name, or a pattern it matches.
func (t Targets) Has(target string) bool {
	if t.names[target] {
		return true
	}
	for _, p := range t.patterns {
		prefix, suffix, _ := strings.Cut(p, "%")
		if len(target) > len(prefix)+len(suffix) && strings.HasPrefix(target, prefix) && strings.HasSuffix(target, suffix) {
			return true
		}
	}
	return false
}
