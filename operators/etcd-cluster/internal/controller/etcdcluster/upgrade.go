package etcdcluster

import (
	"fmt"
	"strconv"
	"strings"
)

// semver is major.minor.patch.
type semver [3]int

func parseSemver(v string) (semver, error) {
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return semver{}, fmt.Errorf("version %q is not major.minor.patch", v)
	}
	var s semver
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return semver{}, fmt.Errorf("version %q is not major.minor.patch", v)
		}
		s[i] = n
	}
	return s, nil
}

// checkUpgrade allows the paths etcd supports: any patch change within a minor, or one
// minor up. Everything else (a minor down, two minors up, another major) is refused.
func checkUpgrade(from, to string) error {
	if from == "" || from == to {
		return nil
	}
	f, err := parseSemver(from)
	if err != nil {
		return err
	}
	t, err := parseSemver(to)
	if err != nil {
		return err
	}
	switch {
	case f[0] != t[0]:
		return fmt.Errorf("etcd cannot move from %s to %s: a different major version", from, to)
	case t[1] == f[1] || t[1] == f[1]+1:
		return nil
	case t[1] < f[1]:
		return fmt.Errorf("etcd cannot be downgraded from %s to %s: a lower minor version", from, to)
	default:
		return fmt.Errorf("etcd upgrades one minor version at a time: %s to %s skips a minor; upgrade to %d.%d.x first", from, to, f[0], f[1]+1)
	}
}
