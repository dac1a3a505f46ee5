package manager

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// SetFromEnv sets each flag of env (flag name to environment variable) whose variable is set
// and not empty, before the command line is parsed, so that the command line wins. OLM
// installs pass settings as environment variables only (Subscription.spec.config.env), so
// an operator's own policy flags read them this way.
func SetFromEnv(flags *flag.FlagSet, env map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(env)) {
		v := os.Getenv(env[name])
		if v == "" {
			continue
		}
		if err := flags.Set(name, v); err != nil {
			return fmt.Errorf("$%s: %w", env[name], err)
		}
	}
	return nil
}

// ParseFlags parses the command line once each flag of env whose variable is set took its
// value (SetFromEnv); a bad value ends the process with status 2, as flag.Parse does.
func ParseFlags(env map[string]string) {
	if err := SetFromEnv(flag.CommandLine, env); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	flag.Parse()
}

// ListFlag is a flag.Func setting *dst to a comma-separated list's entries, blanks ignored.
func ListFlag(dst *[]string) func(string) error {
	return func(v string) error { *dst = commaList(v); return nil }
}

// commaList is the entries of a comma-separated list, trimmed, blanks ignored.
func commaList(value string) []string {
	var entries []string
	for entry := range strings.SplitSeq(value, ",") {
		if entry = strings.TrimSpace(entry); entry != "" {
			entries = append(entries, entry)
		}
	}
	return entries
}
