package backup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/certs"
)

// A backup to a volume runs in a Job (etcd-snapshot backup-to-volume) that mounts the claim at
// JobVolumeDir and, over TLS, the client certificate at JobTLSDir; these variables tell it
// the rest. It writes its JobResult as its termination message.
const (
	JobVolumeDir = "/var/lib/etcd-backup"
	JobTLSDir    = "/etc/etcd-backup/tls"

	EnvJobEndpoints  = "BACKUP_ENDPOINTS"   // comma-separated client URLs
	EnvJobClaim      = "BACKUP_CLAIM"       // the claim's name, for the paths in status
	EnvJobKey        = "BACKUP_PATH"        // the path in the volume (a periodic backup's prefix)
	EnvJobPeriodic   = "BACKUP_PERIODIC"    // "true" for a periodic backup
	EnvJobMaxBackups = "BACKUP_MAX_BACKUPS" // retention: how many periodic backups
	EnvJobMaxAge     = "BACKUP_MAX_AGE"     // retention: a Go duration
	EnvJobTimeout    = "BACKUP_TIMEOUT"     // a Go duration bounding the backup
	EnvJobVerify     = "BACKUP_VERIFY"      // "true": verify the backup before it counts

	// JobScratchDir is where a Job restores a backup to verify it (an emptyDir).
	JobScratchDir = "/var/lib/etcd-verify"
)

// Verifier restores the backup open reads into a scratch etcd and compares its keyspace
// with want, the member's (datadir.VerifyBackup); it says what it compared.
type Verifier func(ctx context.Context, open func(context.Context) (io.ReadCloser, error), sha256 string,
	want *v1beta2.KeyspaceFingerprint) (string, error)

// maxPrunedInResult keeps a termination message under the kubelet's 4 KiB.
const maxPrunedInResult = 16

// JobResult is what a backup, verification or restore Job reports: what it did, or why it
// failed.
type JobResult struct {
	Record       *v1beta2.BackupRecord       `json:"record,omitempty"`
	Verification *v1beta2.BackupVerification `json:"verification,omitempty"`
	// Restored says what a restore did (restore-member).
	Restored   string   `json:"restored,omitempty"`
	Pruned     []string `json:"pruned,omitempty"`
	PruneError string   `json:"pruneError,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	Message    string   `json:"message,omitempty"`
}

// Err is the result's failure, nil for a backup taken or verified, or a restore done.
func (r JobResult) Err() error {
	if r.Record != nil || r.Verification != nil || r.Restored != "" {
		return nil
	}
	reason := r.Reason
	if reason == "" {
		reason = v1beta2.ReasonJobFailed
	}
	return &Error{Reason: reason, Err: fmt.Errorf("%s", r.Message)}
}

// RunJob is the Job's work: it takes the backup the environment describes into the volume
// mounted at volumeDir (JobVolumeDir), with the client certificate in tlsDir (JobTLSDir) if
// any, verifies it with verify when asked (a backup that differs is deleted), prunes what
// retention no longer keeps once the backup counts, and returns what to report.
func RunJob(ctx context.Context, getenv func(string) string, volumeDir, tlsDir string, now time.Time, verify Verifier) JobResult {
	target, policy, err := jobTarget(getenv, tlsDir)
	if err != nil {
		return JobResult{Reason: v1beta2.ReasonCredentialsInvalid, Message: err.Error()}
	}
	target.Keyspace = getenv(EnvJobVerify) == "true"
	ctx, cancel := context.WithTimeout(ctx, Timeout(policy))
	defer cancel()
	folder, key := Folder{Dir: volumeDir, Name: getenv(EnvJobClaim)}, getenv(EnvJobKey)
	record, err := Take(ctx, target, folder, func(revision int64) string {
		if Periodic(policy) {
			return PeriodicKey(key, revision, now)
		}
		return key
	})
	if err != nil {
		return JobResult{Reason: ReasonOf(err), Message: err.Error()}
	}
	taken := strings.TrimPrefix(record.Path, folder.Name+"/")
	if target.Keyspace {
		open := func(ctx context.Context) (io.ReadCloser, error) { return folder.Get(ctx, taken) }
		message, err := verify(ctx, open, record.SHA256, record.Keyspace)
		if err != nil {
			return verificationFailed(ctx, folder, taken, err)
		}
		record.Verification = &v1beta2.BackupVerification{Time: metav1.Now(), Message: message}
	}
	result := JobResult{Record: &record}
	pruned, err := Prune(ctx, folder, key, taken, policy, now)
	if err != nil {
		result.PruneError = err.Error()
	}
	result.Pruned = pruned[:min(len(pruned), maxPrunedInResult)]
	return result
}

// verificationFailed reports a verification that failed; a backup that differs from its
// member (VerificationFailed) is deleted, one that was never compared is left.
func verificationFailed(ctx context.Context, store Objects, key string, err error) JobResult {
	result := JobResult{Reason: ReasonOf(err), Message: err.Error()}
	if result.Reason != v1beta2.ReasonVerificationFailed {
		if _, ok := errors.AsType[*Error](err); !ok {
			result.Reason = v1beta2.ReasonJobFailed // a scratch etcd that did not start, say
		}
		return result
	}
	if err := store.Delete(ctx, key); err != nil {
		result.Message += fmt.Sprintf(" (deleting the backup %s failed: %v)", store.Path(key), err)
	} else {
		result.Message += fmt.Sprintf(" (the backup %s was deleted)", store.Path(key))
	}
	return result
}

// jobTarget reads the cluster, its client certificate and the policy from the environment.
func jobTarget(getenv func(string) string, tlsDir string) (Target, *v1beta2.BackupPolicy, error) {
	target := Target{Endpoints: strings.Split(getenv(EnvJobEndpoints), ","), DialTimeout: 5 * time.Second}
	policy := &v1beta2.BackupPolicy{}
	if getenv(EnvJobPeriodic) == "true" {
		policy.BackupIntervalInSecond = 1 // periodic: keys carry the revision; the interval is the manager's
	}
	if timeout, err := time.ParseDuration(getenv(EnvJobTimeout)); err == nil {
		policy.TimeoutInSecond = int64(timeout.Seconds())
	}
	policy.MaxBackups, _ = strconv.Atoi(getenv(EnvJobMaxBackups))
	if age, err := time.ParseDuration(getenv(EnvJobMaxAge)); err == nil {
		policy.MaxAge = &metav1.Duration{Duration: age}
	}
	data := map[string][]byte{}
	for _, k := range []string{certs.ClientLayout.Cert, certs.ClientLayout.Key, certs.ClientLayout.CA} {
		if b, err := os.ReadFile(filepath.Join(tlsDir, k)); err == nil { //nolint:gosec // the mounted Secret's files
			data[k] = b
		}
	}
	if len(data) == 0 {
		return target, policy, nil
	}
	pair, err := certs.ClientLayout.Read("the client certificate mounted at "+tlsDir, data)
	if err == nil {
		target.TLS, err = certs.ClientConfig(pair)
	}
	return target, policy, err
}

// EncodeResult is r as a termination message.
func EncodeResult(r JobResult) []byte {
	b, _ := json.Marshal(r) //nolint:errchkjson // plain fields
	return b
}

// DecodeResult reads a Job's termination message.
func DecodeResult(message string) (JobResult, error) {
	var r JobResult
	if err := json.Unmarshal([]byte(message), &r); err != nil {
		return r, fmt.Errorf("the backup Job's termination message %q: %w", message, err)
	}
	return r, nil
}
