package manager

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
)

// cgroupMemoryLimits hold a container's memory limit: cgroup v2's memory.max, and v1's
// limit_in_bytes (the local cluster's node runs on a v1 host).
var cgroupMemoryLimits = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// cgroupV1Unlimited: cgroup v1 says "no limit" with the largest page-aligned int64 and
// thereabouts; no container is limited to 4 EiB.
const cgroupV1Unlimited = 1 << 62

// memoryLimitShare is the share of the container's memory limit the Go runtime keeps its own
// memory under (its heap, stacks and runtime structures). The rest is for what it does not
// count: chiefly the binary's pages, which the kernel can drop and read again.
const memoryLimitShare = 0.9

// softMemoryLimit is the Go runtime's memory limit for a process whose cgroup's memory limit
// file reads limit: memoryLimitShare of it. It is false without a limit ("max", v1's
// unlimited, or no cgroup file) and when GOMEMLIMIT is set, which is the user's to choose. It
// is pure.
func softMemoryLimit(limit string, gomemlimit string) (int64, bool, error) {
	value := strings.TrimSpace(limit)
	if gomemlimit != "" || value == "" || value == "max" {
		return 0, false, nil
	}
	bytes, err := strconv.ParseInt(value, 10, 64)
	if err != nil || bytes <= 0 {
		return 0, false, fmt.Errorf("the container's memory limit reads %q: not a number of bytes", value)
	}
	if bytes >= cgroupV1Unlimited {
		return 0, false, nil
	}
	return int64(math.Floor(float64(bytes) * memoryLimitShare)), true, nil
}

// limitMemory bounds the Go runtime's memory under the container's memory limit, so that near
// the limit the garbage collector runs more often rather than the kernel killing the manager
// (the Deployments limit it to 256Mi; at 1000 objects kre-runtime's settles at about 205 MiB
// of anonymous memory). It does nothing out of a container or with GOMEMLIMIT set.
func limitMemory(log logr.Logger) {
	limit, ok, err := softMemoryLimit(containerMemoryLimit(), os.Getenv("GOMEMLIMIT"))
	if err != nil {
		log.Error(err, "The Go runtime keeps no memory limit")
		return
	}
	if ok {
		debug.SetMemoryLimit(limit)
		log.Info("Go memory limit set from the container's", "bytes", limit, "share", memoryLimitShare)
	}
}

// containerMemoryLimit is the first cgroup memory limit file's content; empty without one.
func containerMemoryLimit() string {
	for _, path := range cgroupMemoryLimits {
		if data, err := os.ReadFile(path); err == nil { //nolint:gosec // one of the fixed cgroup files above
			return string(data)
		}
	}
	return ""
}
