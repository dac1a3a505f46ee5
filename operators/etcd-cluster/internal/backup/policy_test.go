package backup_test

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1beta2 "github.com/quintet-operators/quintet/operators/etcd-cluster/api/v1beta2"
	"github.com/quintet-operators/quintet/operators/etcd-cluster/internal/backup"
)

var t0 = time.Date(2026, 11, 25, 10, 7, 30, 0, time.UTC)

func backupAt(p *v1beta2.BackupPolicy, last *time.Time, failure *v1beta2.BackupFailure) *v1beta2.EtcdBackup {
	b := &v1beta2.EtcdBackup{Spec: v1beta2.EtcdBackupSpec{BackupPolicy: p}}
	if last != nil {
		b.Status.LastBackup = &v1beta2.BackupRecord{StartTime: metav1.NewTime(*last)}
	}
	b.Status.LastFailure = failure
	return b
}

func TestDue(t *testing.T) {
	interval := &v1beta2.BackupPolicy{BackupIntervalInSecond: 600}
	hourly := &v1beta2.BackupPolicy{Schedule: "0 * * * *"}
	failedAt := func(at time.Time, n int32) *v1beta2.BackupFailure {
		return &v1beta2.BackupFailure{Time: metav1.NewTime(at), Consecutive: n}
	}
	for _, tc := range []struct {
		name string
		b    *v1beta2.EtcdBackup
		want time.Time // zero: at once
	}{
		{"a new one-shot backup: now", backupAt(nil, nil, nil), time.Time{}},
		{"a one-shot backup that failed twice: 20s later", backupAt(nil, nil, failedAt(t0, 2)), t0.Add(20 * time.Second)},
		{"a new periodic backup: now", backupAt(interval, nil, nil), time.Time{}},
		{"an interval after the last", backupAt(interval, &t0, nil), t0.Add(10 * time.Minute)},
		{"the next hour after the last", backupAt(hourly, &t0, nil), time.Date(2026, 11, 25, 11, 0, 0, 0, time.UTC)},
		{"a retry comes before the schedule", backupAt(interval, &t0, failedAt(t0.Add(time.Minute), 1)), t0.Add(time.Minute + 10*time.Second)},
		{"the schedule comes before a late retry", backupAt(interval, &t0, failedAt(t0.Add(8*time.Minute), 6)), t0.Add(10 * time.Minute)},
	} {
		got, ok, err := backup.Due(tc.b)
		if err != nil || !ok || !got.Equal(tc.want) {
			t.Errorf("%s: Due = %v, %v, %v; want %v", tc.name, got, ok, err, tc.want)
		}
	}
	if _, ok, err := backup.Due(backupAt(nil, &t0, nil)); ok || err != nil {
		t.Errorf("a one-shot backup taken: Due says another is due (%v, %v)", ok, err)
	}
	_, _, err := backup.Due(backupAt(&v1beta2.BackupPolicy{Schedule: "61 * * * *"}, &t0, nil))
	if backup.ReasonOf(err) != v1beta2.ReasonScheduleInvalid {
		t.Errorf("a schedule with minute 61: %v, want ScheduleInvalid", err)
	}
}

func TestIntervalIsTheLongestWaitBetweenTwoBackups(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		name string
		p    *v1beta2.BackupPolicy
		want time.Duration // 0: none
	}{
		{"a one-shot backup", nil, 0},
		{"a one-shot backup with a timeout", &v1beta2.BackupPolicy{TimeoutInSecond: 60}, 0},
		{"an interval", &v1beta2.BackupPolicy{BackupIntervalInSecond: 600}, 10 * time.Minute},
		{"hourly", &v1beta2.BackupPolicy{Schedule: "@hourly"}, time.Hour},
		{"every six hours", &v1beta2.BackupPolicy{Schedule: "0 */6 * * *"}, 6 * time.Hour},
		{"every minute", &v1beta2.BackupPolicy{Schedule: "* * * * *"}, time.Minute},
		{"@every", &v1beta2.BackupPolicy{Schedule: "@every 90s"}, 90 * time.Second},
		{"at 3 and 4: the night", &v1beta2.BackupPolicy{Schedule: "0 3,4 * * *"}, 23 * time.Hour},
		{"on weekdays: the weekend", &v1beta2.BackupPolicy{Schedule: "0 3 * * 1-5"}, 3 * day},
		{"monthly: the longest month", &v1beta2.BackupPolicy{Schedule: "@monthly"}, 31 * day},
		{"on leap days", &v1beta2.BackupPolicy{Schedule: "0 0 29 2 *"}, (4*365 + 1) * day},
		{"a schedule that does not parse", &v1beta2.BackupPolicy{Schedule: "61 * * * *"}, 0},
		{"a schedule that never fires", &v1beta2.BackupPolicy{Schedule: "0 0 30 2 *"}, 0},
	} {
		got, ok := backup.Interval(tc.p)
		if got != tc.want || ok != (tc.want > 0) {
			t.Errorf("%s: Interval = %v, %v; want %v", tc.name, got, ok, tc.want)
		}
	}
}

func TestRetryDoublesUpToFiveMinutes(t *testing.T) {
	got := make([]time.Duration, 0, 8)
	for n := range int32(8) {
		got = append(got, backup.Retry(n+1))
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 5 * time.Minute, 5 * time.Minute, 5 * time.Minute}
	if !slices.Equal(got, want) {
		t.Errorf("Retry(1..8) = %v, want %v", got, want)
	}
}

func TestExpired(t *testing.T) {
	objects := func(ages ...time.Duration) []backup.Object {
		os := make([]backup.Object, 0, len(ages))
		for i, a := range ages {
			os = append(os, backup.Object{Key: string(rune('a' + i)), LastModified: t0.Add(-a)})
		}
		return os
	}
	h := time.Hour
	for _, tc := range []struct {
		name       string
		objects    []backup.Object
		maxBackups int
		maxAge     time.Duration
		want       []string
	}{
		{"within both limits", objects(0, h, 2*h), 3, 3 * h, nil},
		{"beyond the count, oldest first", objects(h, 0, 3*h, 2*h), 2, 0, []string{"c", "d"}},
		{"beyond the age", objects(0, 2*h, 30*time.Minute), 0, h, []string{"b"}},
		{"the newest stays whatever its age", objects(5*h, 6*h), 0, h, []string{"b"}},
		{"the one just taken stays, even if its clock is behind", objects(h, 0, 2*h), 1, 0, []string{"c"}},
	} {
		keep := "a"
		if got := backup.Expired(tc.objects, keep, tc.maxBackups, tc.maxAge, t0); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Expired = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestPeriodicKeyIsCoreOSsName(t *testing.T) {
	if got, want := backup.PeriodicKey("etcd/backup", 1234, t0), "etcd/backup_v1234_2026-11-25-10:07:30"; got != want {
		t.Errorf("PeriodicKey = %q, want %q", got, want)
	}
}

func TestCredentialsFromTheCoreOSSecret(t *testing.T) {
	got, err := backup.CredentialsFrom(map[string][]byte{
		backup.CredentialsKey: []byte("# keys\n[other]\naws_access_key_id = no\n\n[default]\naws_access_key_id = AKID\naws_secret_access_key=SECRET\n"),
		backup.ConfigKey:      []byte("[profile other]\nregion = nowhere\n[default]\nregion = eu-west-3\n"),
	})
	if want := (backup.Credentials{AccessKeyID: "AKID", SecretAccessKey: "SECRET", Region: "eu-west-3"}); err != nil || got != want {
		t.Errorf("CredentialsFrom = %+v, %v; want %+v", got, err, want)
	}
	got, err = backup.CredentialsFrom(map[string][]byte{backup.CredentialsKey: []byte("[default]\naws_access_key_id = a\naws_secret_access_key = b\n")})
	if err != nil || got.Region != "us-east-1" {
		t.Errorf("without config: %+v, %v; want region us-east-1", got, err)
	}
	for name, data := range map[string]map[string][]byte{
		"no credentials key":   {backup.ConfigKey: []byte("[default]\nregion = x\n")},
		"no default profile":   {backup.CredentialsKey: []byte("[other]\naws_access_key_id = a\naws_secret_access_key = b\n")},
		"no secret access key": {backup.CredentialsKey: []byte("[default]\naws_access_key_id = a\n")},
	} {
		if _, err := backup.CredentialsFrom(data); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
