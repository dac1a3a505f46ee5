package manager

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"
)

// A page fault in a file's mapping has the kernel read ahead of it: as much as the disk's
// read_ahead_kb around the page (128 KiB by default; 8 MiB on the disks of this project's
// machines). A manager under a container's memory limit is charged for those pages: at 1000
// objects etcd-cluster's manager under 64Mi held 33 MiB of its 86 MiB binary in the page cache,
// of it 5 MiB mapped, and faulted its code back in 500 times a second (make bench-scale's
// memory-limited runs, session 36). Advised MADV_RANDOM, the kernel reads the page that faulted
// and no more: the same manager settled its 1000 clusters under 64Mi, in 2.7 times its time
// without a limit (1.74 times with read-ahead turned off on the disk).

// mapping is an address range of the process's memory map.
type mapping struct{ start, end uintptr }

// fileMappings are the ranges of the memory map maps (/proc/self/maps' format) that map a file:
// those with an inode. A Go manager's are its binary's (and, built with cgo, its C libraries').
// Device and inode do not name the binary itself: under overlayfs, a container's root, the
// mapping's are the lower layer's file's, not those stat gives. It is pure.
func fileMappings(maps io.Reader) ([]mapping, error) {
	var found []mapping
	lines := bufio.NewScanner(maps)
	for lines.Scan() {
		// start-end perms offset major:minor inode [path]
		fields := strings.Fields(lines.Text())
		if len(fields) < 5 || fields[4] == "0" {
			continue
		}
		from, to, ok := strings.Cut(fields[0], "-")
		start, err1 := strconv.ParseUint(from, 16, 64)
		end, err2 := strconv.ParseUint(to, 16, 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("a memory map line reads %q: not an address range", fields[0])
		}
		found = append(found, mapping{start: uintptr(start), end: uintptr(end)})
	}
	return found, lines.Err()
}

// adviseRandomReads has the kernel read the manager's own binary a page at a time when it
// faults it in, rather than read ahead of the fault (see above). A failure costs only memory:
// it is logged, and the manager goes on.
func adviseRandomReads(log logr.Logger) {
	n, err := adviseFileMappings(unix.MADV_RANDOM)
	if err != nil {
		log.Error(err, "The kernel reads ahead in the manager's binary, as by default")
		return
	}
	log.V(1).Info("The kernel reads the manager's binary a page at a time", "mappings", n)
}

// adviseFileMappings gives advice (madvise's) for every range of this process's memory that
// maps a file, and returns how many it advised.
func adviseFileMappings(advice int) (int, error) {
	maps, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, err
	}
	defer func() { _ = maps.Close() }()
	ranges, err := fileMappings(maps)
	if err != nil {
		return 0, err
	}
	for _, r := range ranges {
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, r.start, r.end-r.start, uintptr(advice)); errno != 0 {
			return 0, fmt.Errorf("madvise %#x-%#x: %w", r.start, r.end, errno)
		}
	}
	return len(ranges), nil
}
