// Command etcd-snapshot is the binary of the pods the etcd-cluster operator runs, beside the
// manager in the operator's image (at jobs.SnapshotBinary): the restore of a cluster's first
// member from a snapshot, and the Jobs that back up to a volume and verify a backup. It
// carries etcd's own restore and server code, which the manager does not link.
package main

import (
	"fmt"
	"os"
)

const usage = "usage: etcd-snapshot restore-member | backup-to-volume | verify-backup (the operator's pods run it, configured by their environment)"

func main() { os.Exit(run(os.Args[1:])) }

// run runs the command args name, or says how to use etcd-snapshot (exit status 2).
func run(args []string) int {
	commands := map[string]func() int{
		"restore-member":   restoreMember,
		"backup-to-volume": backupToVolume,
		"verify-backup":    verifyBackup,
	}
	if len(args) != 1 || commands[args[0]] == nil {
		fmt.Fprintln(os.Stderr, usage)
		return 2
	}
	return commands[args[0]]()
}
