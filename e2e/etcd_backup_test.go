//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	. "github.com/onsi/ginkgo/v2" //nolint:revive // ginkgo's DSL
	. "github.com/onsi/gomega"    //nolint:revive // gomega's DSL
	bolt "go.etcd.io/bbolt"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/protobuf/proto"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The EtcdBackups of the e2e suite go to the local cluster's S3 store (make s3-up), through
// its Service's DNS name as the operator's pods reach it.
const inClusterS3 = "http://s3.quintet-s3.svc:9000"

// newBackupBucket makes a bucket in the local store for one spec, and the CoreOS-style
// awsSecret "aws" in ns with the store's root credentials; it returns the bucket and a
// client of the store.
func newBackupBucket(ctx context.Context, ns string) (string, *s3.Client) {
	endpoint, access, secret := localS3(ctx)
	store := s3Client(endpoint, access, secret)
	bucket := "e2e-backups-" + randomHex(4)
	_, err := store.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket})
	Expect(err).NotTo(HaveOccurred())
	writeSecret(ctx, ns, "aws", map[string][]byte{
		"credentials": fmt.Appendf(nil, "[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n", access, secret),
	})
	return bucket, store
}

// etcdBackup is an EtcdBackup of cluster to bucket/key with the awsSecret "aws", once.
func etcdBackup(cluster *unstructured.Unstructured, bucket, key string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "etcd.database.coreos.com/v1beta2", "kind": "EtcdBackup",
		"metadata": map[string]any{"name": cluster.GetName() + "-backup", "namespace": cluster.GetNamespace()},
		"spec": map[string]any{
			"clusterName": cluster.GetName(), "storageType": "S3",
			"s3": map[string]any{"path": bucket + "/" + key, "awsSecret": "aws", "endpoint": inClusterS3, "forcePathStyle": true},
		},
	}}
}

// writeBackupKeys writes a 1 MiB value and 2000 small ones under prefix, and returns what it
// wrote.
func writeBackupKeys(ctx context.Context, c *clientv3.Client, prefix string) map[string][]byte {
	written := map[string][]byte{prefix + "big": bytes.Repeat([]byte("0123456789abcdef"), 1<<16)}
	for i := range 2000 {
		written[fmt.Sprintf("%ssmall-%04d", prefix, i)] = fmt.Appendf(nil, "value %d", i)
	}
	for k, v := range written {
		_, err := c.Put(ctx, k, string(v))
		Expect(err).NotTo(HaveOccurred())
	}
	return written
}

// readObject reads bucket/key from the store.
func readObject(ctx context.Context, store *s3.Client, bucket, key string) []byte {
	out, err := store.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = out.Body.Close() }()
	b, err := io.ReadAll(out.Body)
	Expect(err).NotTo(HaveOccurred())
	return b
}

// snapshotKeys opens a snapshot as etcd stores it (a bbolt database followed by its
// SHA-256) and returns the latest value of each key under prefix, from its MVCC history,
// and the highest revision in it.
func snapshotKeys(snapshot []byte, prefix string) (map[string][]byte, int64) {
	db := snapshot[:len(snapshot)-sha256.Size]
	path := filepath.Join(GinkgoT().TempDir(), "snapshot.db")
	Expect(os.WriteFile(path, db, 0o600)).To(Succeed())
	b, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = b.Close() }()
	keys := map[string][]byte{}
	var revision int64
	Expect(b.View(func(tx *bolt.Tx) error {
		bucket := tx.Bucket([]byte("key"))
		if bucket == nil {
			return fmt.Errorf("no bucket key: not an etcd database")
		}
		// Keys are revisions (8 bytes main, "_", 8 bytes sub, "t" on a deletion), in order.
		return bucket.ForEach(func(rev, value []byte) error {
			revision = max(revision, int64(binary.BigEndian.Uint64(rev[:8]))) //nolint:gosec // a revision
			var kv mvccpb.KeyValue
			if err := proto.Unmarshal(value, &kv); err != nil {
				return err
			}
			if !strings.HasPrefix(string(kv.Key), prefix) {
				return nil
			}
			if len(rev) == 18 && rev[17] == 't' {
				delete(keys, string(kv.Key))
			} else {
				keys[string(kv.Key)] = kv.Value
			}
			return nil
		})
	})).To(Succeed())
	return keys, revision
}

// backupStatus is the part of an EtcdBackup's status these specs read.
type backupStatus struct {
	etcdStatus                   // its conditions
	LastSuccessDate *metav1.Time `json:"lastSuccessDate"`
	LastFailure     *struct {
		Reason  string `json:"reason"`
		Message string `json:"message"`
	} `json:"lastFailure"`
	LastBackup struct {
		Path         string `json:"path"`
		Member       string `json:"member"`
		EtcdRevision int64  `json:"etcdRevision"`
		Size         int64  `json:"size"`
		SHA256       string `json:"sha256"`
		Verification *struct {
			Message string `json:"message"`
		} `json:"verification"`
	} `json:"lastBackup"`
}

// expectVerified checks that backup's last backup was verified in a Job: restored into a
// scratch etcd, its keyspace the member's.
func expectVerified(ctx context.Context, backup *unstructured.Unstructured) {
	st := getStatus[backupStatus](ctx, Default, backup)
	Expect(st.LastBackup.Verification).NotTo(BeNil(), "spec.verify: the backup counts once verified")
	By("verified: " + st.LastBackup.Verification.Message)
	Expect(st.LastBackup.Verification.Message).To(ContainSubstring("as on the member"))
}

// expectBackupOf checks a one-shot backup of cluster: Ready, from a follower, its object
// etcd's snapshot with a matching SHA-256, holding every key written before it.
func expectBackupOf(ctx context.Context, cluster, backup *unstructured.Unstructured, store *s3.Client, bucket, key string, written map[string][]byte, prefix string) {
	var st backupStatus
	Eventually(func(g Gomega) {
		st = getStatus[backupStatus](ctx, g, backup)
		g.Expect(st.condition("Ready")).To(Equal("True"), "Ready: %s %s", st.reason("Ready"), st.message("Ready"))
	}).WithContext(ctx).WithTimeout(2 * time.Minute).Should(Succeed())
	last := st.LastBackup
	By(fmt.Sprintf("backed up revision %d of %s: %d bytes, sha256 %s", last.EtcdRevision, last.Member, last.Size, last.SHA256))
	Expect(last.Path).To(Equal(bucket + "/" + key))

	s := getEtcdStatus(ctx, Default, cluster)
	var member string
	for _, m := range s.Members {
		if m.Name == last.Member {
			member = m.ID
		}
	}
	Expect(member).NotTo(BeEmpty(), "the backup names a member of the cluster")
	Expect(member).NotTo(Equal(s.LeaderID), "the snapshot comes from a follower: the leader keeps serving")

	snapshot := readObject(ctx, store, bucket, key)
	Expect(int64(len(snapshot))).To(Equal(last.Size))
	sum := sha256.Sum256(snapshot[:len(snapshot)-sha256.Size])
	Expect(hex.EncodeToString(snapshot[len(snapshot)-sha256.Size:])).To(Equal(last.SHA256), "status.lastBackup.sha256 is what etcd appended")
	Expect(hex.EncodeToString(sum[:])).To(Equal(last.SHA256), "and it is the database's")

	keys, revision := snapshotKeys(snapshot, prefix)
	Expect(revision).To(BeNumerically(">=", last.EtcdRevision))
	Expect(keys).To(HaveLen(len(written)))
	for k, v := range written {
		Expect(bytes.Equal(keys[k], v)).To(BeTrue(), "key %s in the snapshot", k)
	}
}

// etcdRestore is the CoreOS EtcdRestore name of the snapshot at path (awsSecret "aws") into
// a new cluster of 3 members of version on the real node.
func etcdRestore(ns, name, cluster, path, version string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "etcd.database.coreos.com/v1beta2", "kind": "EtcdRestore",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"etcdCluster":       map[string]any{"name": cluster},
			"backupStorageType": "S3",
			"s3":                map[string]any{"path": path, "awsSecret": "aws", "endpoint": inClusterS3, "forcePathStyle": true},
			"clusterSpec": map[string]any{"size": int64(3), "version": version, "repository": requiredEnv("E2E_IMAGES") + "/etcd",
				"pod": realNodePlacement()},
		},
	}}
}

// restoreStatus is the part of an EtcdRestore's status these specs read.
type restoreStatus struct {
	etcdStatus      // its conditions
	Succeeded  bool `json:"succeeded"`
}

// expectSameKeys checks that the plain cluster holds under prefix exactly the keys and values
// written: their count and a SHA-256 of them all.
func expectSameKeys(ctx context.Context, cluster *unstructured.Unstructured, written map[string][]byte, prefix string) {
	wantCount, wantDigest := keysDigest(written)
	gotCount, gotDigest := keysDigest(readKeys(ctx, etcdTLSClient(ctx, cluster, nil), prefix))
	Expect(gotCount).To(Equal(wantCount))
	Expect(gotDigest).To(Equal(wantDigest), "the SHA-256 of every key and value")
}

// keysDigest is the number of keys under prefix and a SHA-256 of every key and value, in
// key order.
func keysDigest(kvs map[string][]byte) (int, string) {
	keys := slices.Sorted(maps.Keys(kvs))
	h := sha256.New()
	for _, k := range keys {
		_, _ = fmt.Fprintf(h, "%d:%s%d:", len(k), k, len(kvs[k]))
		_, _ = h.Write(kvs[k])
	}
	return len(keys), hex.EncodeToString(h.Sum(nil))
}

// readKeys reads every key under prefix and its value.
func readKeys(ctx context.Context, c *clientv3.Client, prefix string) map[string][]byte {
	resp, err := c.Get(ctx, prefix, clientv3.WithPrefix())
	Expect(err).NotTo(HaveOccurred())
	kvs := map[string][]byte{}
	for _, kv := range resp.Kvs {
		kvs[string(kv.Key)] = kv.Value
	}
	return kvs
}

// expectRestored waits for restore to succeed and its cluster to be Ready with 3 members.
func expectRestored(ctx context.Context, restore, cluster *unstructured.Unstructured, version string) {
	Eventually(func(g Gomega) {
		st := getStatus[restoreStatus](ctx, g, restore)
		g.Expect(st.condition("Ready")).To(Equal("True"), "Ready: %s %s", st.reason("Ready"), st.message("Ready"))
		g.Expect(st.Succeeded).To(BeTrue())
	}).WithContext(ctx).WithTimeout(4 * time.Minute).Should(Succeed())
	expectEtcdReady(ctx, cluster, 3, version)
	Expect(getEtcdStatus(ctx, Default, cluster).condition("Restored")).To(Equal("True"))
}

// etcdClusterRef is the EtcdCluster name in ns, to read.
func etcdClusterRef(ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "etcd.database.coreos.com/v1beta2", "kind": "EtcdCluster",
		"metadata": map[string]any{"name": name, "namespace": ns}}}
}

// storedObjects lists the keys under prefix in bucket.
func storedObjects(ctx context.Context, store *s3.Client, bucket, prefix string) []string {
	out, err := store.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: &prefix})
	Expect(err).NotTo(HaveOccurred())
	keys := make([]string, 0, len(out.Contents))
	for _, o := range out.Contents {
		keys = append(keys, *o.Key)
	}
	return keys
}

// expectWholeSnapshot checks that an object is an etcd snapshot whose SHA-256 matches.
func expectWholeSnapshot(snapshot []byte, key string) {
	Expect(len(snapshot)%512).To(Equal(sha256.Size), "%s: a database of whole pages and its SHA-256", key)
	sum := sha256.Sum256(snapshot[:len(snapshot)-sha256.Size])
	Expect(sum[:]).To(Equal(snapshot[len(snapshot)-sha256.Size:]), "%s: etcd's SHA-256 matches", key)
}
