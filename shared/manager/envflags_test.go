package manager

import (
	"flag"
	"io"
	"strings"
	"testing"
)

func TestSetFromEnvSetsListedFlagsAndTheCommandLineWins(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	a, b := fs.String("a", "default-a", ""), fs.String("b", "default-b", "")
	fs.Int("c", 1, "")
	t.Setenv("QUINTET_TEST_A", "from-env")
	t.Setenv("QUINTET_TEST_B", "")
	if err := SetFromEnv(fs, map[string]string{"a": "QUINTET_TEST_A", "b": "QUINTET_TEST_B"}); err != nil {
		t.Fatal(err)
	}
	if *a != "from-env" || *b != "default-b" {
		t.Fatalf("a=%q b=%q, want a from the environment and b (empty variable) at its default", *a, *b)
	}
	if err := fs.Parse([]string{"-a", "from-flag"}); err != nil {
		t.Fatal(err)
	}
	if *a != "from-flag" {
		t.Fatalf("a=%q, want the command line's value", *a)
	}

	t.Setenv("QUINTET_TEST_C", "not-a-number")
	err := SetFromEnv(fs, map[string]string{"c": "QUINTET_TEST_C"})
	if err == nil || !strings.Contains(err.Error(), "$QUINTET_TEST_C") {
		t.Fatalf("err=%v, want an error naming the variable", err)
	}
}

func TestListFlagTrimsEntriesAndIgnoresBlanks(t *testing.T) {
	var got []string
	if err := ListFlag(&got)(" a, ,b ,"); err != nil || len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("got %q, %v; want [a b]", got, err)
	}
}
