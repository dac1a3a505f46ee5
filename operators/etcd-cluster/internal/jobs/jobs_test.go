package jobs

import (
	"strings"
	"testing"
)

func TestNameStaysALabelValue(t *testing.T) {
	if got := Name("backup", "first"); got != "backup-first" {
		t.Errorf("Name = %q", got)
	}
	long := strings.Repeat("a", 60) + "-b"
	for _, suffix := range []string{"first", "verify-t2x0kg", "restore"} {
		got := Name(long, suffix)
		if len(got) > 63 || !strings.HasSuffix(got, "-"+suffix) || strings.Contains(got, "--") {
			t.Errorf("Name(%d characters, %q) = %q (%d)", len(long), suffix, got, len(got))
		}
	}
}
