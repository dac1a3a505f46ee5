package manager

import "testing"

func TestSoftMemoryLimitLeavesTheBinaryItsPagesUnlessTheUserSetOne(t *testing.T) {
	for _, tt := range []struct {
		name, memoryMax, gomemlimit string
		want                        int64
		set, fails                  bool
	}{
		{name: "256Mi", memoryMax: "268435456\n", want: 208 << 20, set: true}, // v2 and v1 alike
		{name: "128Mi", memoryMax: "134217728\n", want: 80 << 20, set: true},
		// Below 96Mi the Go runtime keeps half: a heap held under the reserve would do little but collect.
		{name: "96Mi", memoryMax: "100663296\n", want: 48 << 20, set: true},
		{name: "64Mi", memoryMax: "67108864\n", want: 32 << 20, set: true},
		{name: "no limit", memoryMax: "max\n"},
		{name: "no cgroup file", memoryMax: ""},
		{name: "cgroup v1 unlimited", memoryMax: "9223372036854771712\n"},
		{name: "GOMEMLIMIT set", memoryMax: "268435456\n", gomemlimit: "100MiB"},
		{name: "not a number", memoryMax: "lots\n", fails: true},
		{name: "zero", memoryMax: "0\n", fails: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, set, err := softMemoryLimit(tt.memoryMax, tt.gomemlimit)
			if (err != nil) != tt.fails {
				t.Fatalf("error %v, want one: %t", err, tt.fails)
			}
			if got != tt.want || set != tt.set {
				t.Errorf("softMemoryLimit = %d, %t; want %d, %t", got, set, tt.want, tt.set)
			}
		})
	}
}
