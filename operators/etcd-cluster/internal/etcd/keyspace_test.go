package etcd

import (
	"strings"
	"testing"
)

func TestCompareKeyspaces(t *testing.T) {
	want := Keyspace{Revision: 10, CompactRevision: 4, Keys: 3, Hash: 0xabc}
	for _, tt := range []struct {
		name  string
		got   Keyspace
		error string // empty: the same
		says  string
	}{
		{"the same", want, "", "3 keys and HashKV 00000abc at revision 10, as on the member"},
		{"another revision", Keyspace{Revision: 11, CompactRevision: 4, Keys: 3, Hash: 0xabc}, "read at revision 11", ""},
		{"a key less", Keyspace{Revision: 10, CompactRevision: 4, Keys: 2, Hash: 0xabc}, "holds 2 keys at revision 10, the member held 3", ""},
		{"another hash", Keyspace{Revision: 10, CompactRevision: 4, Keys: 3, Hash: 0xdef}, "HashKV at revision 10 is 00000def, the member's 00000abc", ""},
		{"compacted since: keys only", Keyspace{Revision: 10, CompactRevision: 2, Keys: 3, Hash: 0xdef}, "", "HashKV not compared"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			says, err := Compare(want, tt.got)
			switch {
			case tt.error == "" && err != nil:
				t.Errorf("Compare = %v; want no error", err)
			case tt.error != "" && (err == nil || !strings.Contains(err.Error(), tt.error)):
				t.Errorf("Compare = %v; want an error with %q", err, tt.error)
			case !strings.Contains(says, tt.says):
				t.Errorf("Compare says %q; want %q in it", says, tt.says)
			}
		})
	}
}
