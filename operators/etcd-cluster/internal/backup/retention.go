package backup

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
)

// PeriodicKey names a periodic backup as the CoreOS operator does:
// "<key>_v<revision>_<UTC time>".
func PeriodicKey(key string, revision int64, at time.Time) string {
	return fmt.Sprintf("%s%d_%s", PeriodicPrefix(key), revision, at.UTC().Format("2006-01-02-15:04:05"))
}

// PeriodicPrefix starts the names of key's periodic backups.
func PeriodicPrefix(key string) string { return key + "_v" }

// Expired returns the keys of the backups that retention deletes, oldest first: beyond the
// newest maxBackups (0: no limit), and older than maxAge (0: no limit). The newest backup
// and keep, the one just taken, are never among them. Only successful backups are ever
// stored, so retention counts only successes.
func Expired(objects []Object, keep string, maxBackups int, maxAge time.Duration, now time.Time) []string {
	byAge := slices.Clone(objects)
	slices.SortFunc(byAge, func(a, b Object) int { return b.LastModified.Compare(a.LastModified) }) // newest first
	var expired []string
	for i, o := range byAge {
		if i == 0 || o.Key == keep {
			continue
		}
		if (maxBackups > 0 && i >= maxBackups) || (maxAge > 0 && now.Sub(o.LastModified) > maxAge) {
			expired = append(expired, o.Key)
		}
	}
	slices.Reverse(expired)
	return expired
}

// Resolve is the key a restore from key reads: key itself when the store has it, else the
// newest periodic backup written under it (the highest revision), so a restore can name an
// EtcdBackup's path and get its latest backup.
func Resolve(ctx context.Context, store Objects, key string) (string, error) {
	objects, err := store.List(ctx, key)
	if err != nil {
		return "", err
	}
	newest, newestRevision := "", int64(-1)
	for _, o := range objects {
		if o.Key == key {
			return key, nil
		}
		rest, ok := strings.CutPrefix(o.Key, PeriodicPrefix(key))
		digits, _, _ := strings.Cut(rest, "_")
		if revision, err := strconv.ParseInt(digits, 10, 64); ok && err == nil && revision > newestRevision {
			newest, newestRevision = o.Key, revision
		}
	}
	if newest == "" {
		return "", &Error{Reason: v1beta2.ReasonSnapshotNotFound,
			Err: fmt.Errorf("no object %s, nor a periodic backup under it (%s<revision>_<time>)", store.Path(key), PeriodicPrefix(key))}
	}
	return newest, nil
}

// Prune deletes from store the periodic backups of key that p's retention no longer keeps,
// never taken (the one just stored); it returns the keys deleted, and the failures, which a
// later backup retries.
func Prune(ctx context.Context, store Objects, key, taken string, p *v1beta2.BackupPolicy, now time.Time) ([]string, error) {
	if !Periodic(p) || (p.MaxBackups == 0 && p.MaxAge == nil) {
		return nil, nil
	}
	objects, err := store.List(ctx, PeriodicPrefix(key))
	if err != nil {
		return nil, err
	}
	var maxAge time.Duration
	if p.MaxAge != nil {
		maxAge = p.MaxAge.Duration
	}
	var deleted []string
	var errs []error
	for _, k := range Expired(objects, taken, p.MaxBackups, maxAge, now) {
		if err := store.Delete(ctx, k); err != nil {
			errs = append(errs, err)
			continue
		}
		deleted = append(deleted, k)
	}
	return deleted, errors.Join(errs...)
}
