package etcdcluster

import (
	"strings"
	"testing"
)

func TestCheckUpgradeAllowsPatchesAndOneMinorUp(t *testing.T) {
	tests := []struct {
		from, to string
		refusal  string // empty: allowed
	}{
		{"", "3.6.8", ""},
		{"3.6.8", "3.6.8", ""},
		{"3.6.7", "3.6.8", ""},
		{"3.6.8", "3.6.7", ""},
		{"3.5.21", "3.6.8", ""},
		{"3.4.30", "3.6.8", "one minor version at a time"},
		{"3.6.8", "3.5.21", "cannot be downgraded"},
		{"3.6.8", "4.0.0", "different major"},
		{"3.6.8", "3.6", "not major.minor.patch"},
	}
	for _, tt := range tests {
		err := checkUpgrade(tt.from, tt.to)
		switch {
		case tt.refusal == "" && err != nil:
			t.Errorf("%s → %s refused: %v", tt.from, tt.to, err)
		case tt.refusal != "" && (err == nil || !strings.Contains(err.Error(), tt.refusal)):
			t.Errorf("%s → %s: got %v, want a refusal saying %q", tt.from, tt.to, err, tt.refusal)
		}
	}
}
