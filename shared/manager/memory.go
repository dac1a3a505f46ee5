package manager

import (
	"fmt"
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

// binaryPagesReserve is what of the container's memory limit the Go runtime leaves for what it
// does not count: chiefly the pages of the manager's binary it runs, which the kernel drops
// under the limit and reads back at the next use. Measured by make bench-scale's memory-limited
// runs (a thousand objects): a group that left them 44 MiB ran at full speed, and one that left
// them 22 to 32 MiB (ptemplate-device's 42 MiB of Go memory under 64Mi, etcd-cluster's 64 under
// 96Mi) spent its time reading them back and settled a tenth of its objects in the time it
// otherwise takes for all of them. Those runs read the binary ahead 8 MiB a fault, before
// adviseRandomReads. Measured again with it: etcd-cluster under 64Mi settled its thousand
// clusters in 1.22 times its time without a limit with 32 MiB for the Go runtime (half the
// limit), and in 1.93 times, with three times the CPU, with 40 (a reserve of 24 MiB): the
// collector's extra work costs less than reading code back.
const binaryPagesReserve = 48 << 20

// softMemoryLimit is the Go runtime's memory limit for a process whose cgroup's memory limit
// file reads limit: the limit less binaryPagesReserve, and half of it at least (below 96 MiB
// the garbage collector would otherwise be held to a heap smaller than the reserve). It is
// false without a limit ("max", v1's unlimited, or no cgroup file) and when GOMEMLIMIT is
// set, which is the user's to choose. It is pure.
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
	return max(bytes-binaryPagesReserve, bytes/2), true, nil
}

// limitMemory bounds the Go runtime's memory under the container's memory limit, so that near
// the limit the garbage collector runs more often rather than the kernel killing the manager
// or, short of that, the kernel reclaiming the pages of the binary it runs over and over (the
// Deployments limit it to 256Mi; at 1000 objects the managers settle at 45 to 64 MiB of
// anonymous memory). It does nothing out of a container or with GOMEMLIMIT set.
func limitMemory(log logr.Logger) {
	limit, ok, err := softMemoryLimit(containerMemoryLimit(), os.Getenv("GOMEMLIMIT"))
	if err != nil {
		log.Error(err, "The Go runtime keeps no memory limit")
		return
	}
	if ok {
		debug.SetMemoryLimit(limit)
		log.Info("Go memory limit set from the container's", "bytes", limit, "leftForTheBinary", binaryPagesReserve)
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
