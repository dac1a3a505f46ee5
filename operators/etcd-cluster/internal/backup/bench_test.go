//go:build bench

package backup_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup/backuptest"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/datadir"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/etcd"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/restore"
	"github.com/quintet-operators/quintet/shared/testenv"
)

// TestBenchBackup (make bench-etcd-backup): a database of BENCH_DB_MIB (256) MiB of
// incompressible values in a real etcd member, backed up to a real versitygw on loopback.
// It prints the backup's time and throughput beside a bare snapshot read to nowhere (what
// streaming through the store adds), and this process's peak RSS during the backup beside
// the database's size (what the backup holds in memory). It writes its figures to the file
// BENCH_FIGURES names, when it is set (testenv.WriteBenchFigures): a line per step that streams the
// database, with its time, its throughput and the peak RSS over before.
func TestBenchBackup(t *testing.T) {
	mib := 256
	if v := os.Getenv("BENCH_DB_MIB"); v != "" {
		var err error
		if mib, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	ctx := t.Context()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{member.URL}, DialTimeout: 5 * time.Second, MaxCallSendMsgSize: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	value := make([]byte, 1<<20)
	for i := range mib {
		_, _ = rand.Read(value)
		if _, err := c.Put(ctx, fmt.Sprintf("bench/%04d", i), string(value)); err != nil {
			t.Fatal(err)
		}
	}
	target := backup.Target{Endpoints: []string{member.URL}, DialTimeout: 5 * time.Second}

	before := resetPeakRSS(t)
	bare := time.Now()
	snap, err := etcd.OpenSnapshot(ctx, target.DialTimeout, nil, member.URL)
	if err != nil {
		t.Fatal(err)
	}
	size, err := io.Copy(io.Discard, snap)
	if err == nil {
		_, _, err = snap.Verify()
	}
	_ = snap.Close()
	if err != nil {
		t.Fatal(err)
	}
	bareTime := time.Since(bare)
	read := figure("snapshot read to nowhere", bareTime, size, rssKiB(t, "VmHWM")<<10-before)

	before = resetPeakRSS(t)
	record, err := backup.Take(ctx, target, rootStore(), func(int64) string { return "bench/etcd.db" })
	if err != nil {
		t.Fatal(err)
	}
	peak := rssKiB(t, "VmHWM") << 10
	took := record.Duration.Duration
	mb := float64(record.Size) / (1 << 20)
	fmt.Printf("\nBackup of a %.0f MiB etcd database (%d MiB of values) to versitygw on loopback, streamed in %d MiB parts\n",
		mb, mib, backup.PartSize>>20)
	fmt.Printf("  %-34s %10s %12s\n", "", "time", "throughput")
	fmt.Printf("  %-34s %10s %9.0f MiB/s\n", "snapshot read to nowhere", bareTime.Round(time.Millisecond), float64(size)/(1<<20)/bareTime.Seconds())
	fmt.Printf("  %-34s %10s %9.0f MiB/s   (%.2f× the bare read)\n", "backup: snapshot, verify, store", took, mb/took.Seconds(), took.Seconds()/bareTime.Seconds())
	fmt.Printf("  peak RSS of this process during the backup: %.0f MiB, %.0f MiB over its RSS before it: %.3f of the database's size\n",
		float64(peak)/(1<<20), float64(peak-before)/(1<<20), float64(peak-before)/float64(record.Size))
	toS3 := figure("backup to S3 (versitygw)", took, record.Size, peak-before)
	before = resetPeakRSS(t)
	onVolume, err := backup.Take(ctx, target, backup.Folder{Dir: t.TempDir(), Name: "claim"}, func(int64) string { return "etcd.db" })
	if err != nil {
		t.Fatal(err)
	}
	peak = rssKiB(t, "VmHWM") << 10
	took = onVolume.Duration.Duration
	fmt.Printf("  %-34s %10s %9.0f MiB/s   (a Job's work; peak RSS %.0f MiB over before)\n", "backup to a volume's folder", took,
		float64(onVolume.Size)/(1<<20)/took.Seconds(), float64(max(peak-before, 0))/(1<<20))
	toVolume := figure("backup to a volume's folder", took, onVolume.Size, peak-before)
	restored := benchRestore(t, record)
	verified := benchVerify(t, target)
	benchDefragment(t, c)
	testenv.WriteBenchFigures(t, "step\ttime (s)\tthroughput (MiB/s)\tpeak RSS over before (MiB)",
		append([]string{read, toS3, toVolume, restored}, verified...)...)
}

// figure is a step's line of the figures: its time, the database's size over it, and this
// process's peak RSS over its RSS before the step.
func figure(step string, took time.Duration, size, rss int64) string {
	return fmt.Sprintf("%s\t%.2f\t%.0f\t%.0f", step, took.Seconds(), float64(size)/(1<<20)/took.Seconds(), float64(max(rss, 0))/(1<<20))
}

// benchVerify takes a backup with the member's keyspace fingerprint and verifies it as the
// verification Jobs do (restore into a scratch etcd, compare), and prints the times; it returns
// the two steps' figures.
func benchVerify(t *testing.T, target backup.Target) []string {
	target.Keyspace = true
	before := resetPeakRSS(t)
	record, err := backup.Take(t.Context(), target, rootStore(), func(int64) string { return "bench/verified.db" })
	if err != nil {
		t.Fatal(err)
	}
	fingerprinted := figure("backup with keyspace fingerprint", record.Duration.Duration, record.Size, rssKiB(t, "VmHWM")<<10-before)
	before = resetPeakRSS(t)
	start := time.Now()
	message, err := datadir.VerifyBackup(t.Context(), zap.NewNop(), t.TempDir(), func(ctx context.Context) (io.ReadCloser, error) {
		return rootStore().Get(ctx, "bench/verified.db")
	}, record.SHA256, record.Keyspace)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	peak := rssKiB(t, "VmHWM") << 10
	fmt.Printf("  %-34s %10s   (%s)\n", "backup with the keyspace fingerprint", record.Duration.Duration, record.Keyspace.HashKV)
	fmt.Printf("  %-34s %10s   (download, restore, scratch etcd, compare: %s; peak RSS %.0f MiB over before)\n", "verification", took.Round(time.Millisecond),
		message, float64(max(peak-before, 0))/(1<<20))
	return []string{fingerprinted, figure("verification: restore and compare", took, record.Size, peak-before)}
}

// benchDefragment deletes every other value and compacts, then defragments the member while a
// client writes and reads, and prints the time it took, what it freed and the longest request.
func benchDefragment(t *testing.T, c *clientv3.Client) {
	ctx := t.Context()
	keys, err := c.Get(ctx, "bench/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	var revision int64
	for i, kv := range keys.Kvs {
		if i%2 == 0 {
			resp, err := c.Delete(ctx, string(kv.Key))
			if err != nil {
				t.Fatal(err)
			}
			revision = resp.Header.Revision
		}
	}
	if _, err := c.Compact(ctx, revision, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	before, err := c.Status(ctx, member.URL)
	if err != nil {
		t.Fatal(err)
	}
	stop, longest := make(chan struct{}), make(chan time.Duration)
	go func() {
		var worst time.Duration
		for i := 0; ; i++ {
			select {
			case <-stop:
				longest <- worst
				return
			default:
			}
			start := time.Now()
			if _, err := c.Put(ctx, "defrag/probe", strconv.Itoa(i)); err == nil {
				_, _ = c.Get(ctx, "defrag/probe")
			}
			worst = max(worst, time.Since(start))
			time.Sleep(10 * time.Millisecond)
		}
	}()
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	if _, err := c.Defragment(ctx, member.URL); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	time.Sleep(200 * time.Millisecond)
	close(stop)
	worst := <-longest
	after, err := c.Status(ctx, member.URL)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("  defragmentation after deleting every other value: %s, database %.1f → %.1f MiB; longest put+get meanwhile %s\n",
		took.Round(time.Millisecond), float64(before.DbSize)/(1<<20), float64(after.DbSize)/(1<<20), worst.Round(time.Millisecond))
	fmt.Printf("  (one member: it serves nothing while it is defragmented; in a cluster the operator takes one member at a time)\n")
}

// benchRestore restores the backup as a restoring cluster's first member does (download,
// check, etcdutl's restore) and starts etcd on it, and prints the times and the peak RSS; it
// returns the restore's figures.
func benchRestore(t *testing.T, record v1beta2.BackupRecord) string {
	peerURL, err := backuptest.FreeURL()
	if err != nil {
		t.Fatal(err)
	}
	clientURL, err := backuptest.FreeURL()
	if err != nil {
		t.Fatal(err)
	}
	m := restore.Member{Name: "bench", DataDir: filepath.Join(t.TempDir(), "data"), PeerURL: peerURL, InitialCluster: "bench=" + peerURL,
		InitialClusterState: "new", Token: "bench", SHA256: record.SHA256}
	before := resetPeakRSS(t)
	start := time.Now()
	if _, err := datadir.Restore(t.Context(), zap.NewNop(), m, func(ctx context.Context) (io.ReadCloser, error) {
		return rootStore().Get(ctx, "bench/etcd.db")
	}); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	peak := rssKiB(t, "VmHWM") << 10
	start = time.Now()
	server, err := backuptest.StartMember(m.DataDir, m.Name, clientURL, peerURL, filepath.Join(t.TempDir(), "etcd.log"))
	if err != nil {
		t.Fatal(err)
	}
	serving := time.Since(start)
	server.Stop()
	mb := float64(record.Size) / (1 << 20)
	fmt.Printf("  %-34s %10s %9.0f MiB/s\n", "restore: download, verify, etcdutl", took.Round(time.Millisecond), mb/took.Seconds())
	fmt.Printf("  %-34s %10s\n", "etcd started on it, until healthy", serving.Round(time.Millisecond))
	fmt.Printf("  peak RSS of this process during the restore: %.0f MiB over its RSS before it (etcdutl maps the database)\n",
		float64(peak-before)/(1<<20))
	return figure("restore from S3 (etcdutl)", took, record.Size, peak-before)
}

// resetPeakRSS resets this process's peak RSS (VmHWM) to its current RSS, and returns it.
func resetPeakRSS(t *testing.T) int64 {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("resetting the peak RSS: %v", err)
	}
	return rssKiB(t, "VmRSS") << 10
}

// rssKiB reads a field of /proc/self/status, in KiB.
func rssKiB(t *testing.T, field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), field+":"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kib
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}
