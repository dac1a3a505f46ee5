package manager

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"golang.org/x/sys/unix"
)

func TestFileMappingsAreTheRangesWithAnInode(t *testing.T) {
	maps := `00400000-01c3a000 r-xp 00000000 00:3a 1835021                            /manager
01c3a000-03a5b000 r--p 0183a000 00:3a 1835021                            /manager (deleted)
03a5b000-03ad2000 rw-p 0365b000 00:3a 1835021                            /manager
03ad2000-03b10000 rw-p 00000000 00:00 0 
c000000000-c004000000 rw-p 00000000 00:00 0 
7ffd6b1d9000-7ffd6b1fa000 rw-p 00000000 00:00 0                          [stack]
7ffd6b1fd000-7ffd6b1ff000 r-xp 00000000 00:00 0                          [vdso]
`
	got, err := fileMappings(strings.NewReader(maps))
	if err != nil {
		t.Fatal(err)
	}
	want := []mapping{{0x400000, 0x1c3a000}, {0x1c3a000, 0x3a5b000}, {0x3a5b000, 0x3ad2000}}
	if !slices.Equal(got, want) {
		t.Errorf("fileMappings = %#v, want %#v", got, want)
	}
	if _, err := fileMappings(strings.NewReader("zz-01 r-xp 00000000 00:3a 7 /manager\n")); err == nil {
		t.Error("fileMappings took an address range that is not one")
	}
}

// The kernel marks a mapping advised MADV_RANDOM with "rr" among its VmFlags in smaps.
func TestAdviseRandomReadsHasTheKernelReadTheBinaryAPageAtATime(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// as the kernel maps a binary, before another test's manager.New advised it
	if _, err := adviseFileMappings(unix.MADV_NORMAL); err != nil {
		t.Fatal(err)
	}
	if n := randomReadMappings(t, exe); n != 0 {
		t.Fatalf("%d of the test binary's mappings are advised random reads after MADV_NORMAL", n)
	}
	adviseRandomReads(logr.Discard())
	if n := randomReadMappings(t, exe); n == 0 {
		t.Error("after adviseRandomReads no mapping of the test binary is advised random reads (VmFlags rr)")
	}
}

// randomReadMappings counts the mappings of path in /proc/self/smaps whose VmFlags hold rr.
func randomReadMappings(t *testing.T, path string) int {
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	n, inPath := 0, false
	for _, line := range strings.Split(string(smaps), "\n") {
		if fields := strings.Fields(line); len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			inPath = len(fields) >= 6 && fields[5] == path
		}
		if inPath && strings.HasPrefix(line, "VmFlags:") && slices.Contains(strings.Fields(line)[1:], "rr") {
			n++
		}
	}
	return n
}
