package backup

import (
	"fmt"
	"slices"
	"time"
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
