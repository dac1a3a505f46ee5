package manager

import (
	"slices"
	"testing"
)

func TestWatchNamespaces(t *testing.T) {
	tests := map[string][]string{
		"":                     nil,
		"team-a":               {"team-a"},
		"team-a,team-b":        {"team-a", "team-b"},
		" team-a , ,team-b , ": {"team-a", "team-b"},
	}
	for value, want := range tests {
		if got := WatchNamespaces(value); !slices.Equal(got, want) {
			t.Errorf("WatchNamespaces(%q) = %v, want %v", value, got, want)
		}
	}
}
