package etcd

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"testing"
)

// snapshotBytes is a database of pages followed by its SHA-256, as etcd streams a snapshot.
func snapshotBytes(pages int) []byte {
	b := make([]byte, pages*4096, pages*4096+sha256.Size)
	for i := range b {
		b[i] = byte(i * 7)
	}
	sum := sha256.Sum256(b)
	return append(b, sum[:]...)
}

// writeInChunks writes b in chunks of random sizes, small ones (below the hash's size)
// among them, as the gRPC stream delivers it.
func writeInChunks(t *trailingHash, b []byte, rng *rand.Rand) { //nolint:gosec // chunk sizes, seeded to repeat
	for len(b) > 0 {
		n := min(len(b), 1+rng.IntN(100))
		if rng.IntN(4) == 0 {
			n = min(len(b), 1+rng.IntN(20000))
		}
		_, _ = t.Write(b[:n])
		b = b[n:]
	}
}

func TestTrailingHashVerifiesWhateverTheChunks(t *testing.T) {
	snap := snapshotBytes(5)
	want := sha256.Sum256(snap[:len(snap)-sha256.Size])
	for seed := range uint64(50) {
		h := newTrailingHash()
		writeInChunks(h, snap, rand.New(rand.NewPCG(seed, 1))) //nolint:gosec // chunk sizes, seeded to repeat
		sum, size, err := h.verify()
		if err != nil || sum != hex.EncodeToString(want[:]) || size != int64(len(snap)) {
			t.Fatalf("seed %d: verify() = %s, %d, %v; want %x, %d, nil", seed, sum, size, err, want, len(snap))
		}
	}
}

func TestTrailingHashRefusesCorruptAndTruncatedSnapshots(t *testing.T) {
	flipped := snapshotBytes(3)
	flipped[5000] ^= 1
	wrongHash := snapshotBytes(3)
	wrongHash[len(wrongHash)-1] ^= 1
	for name, b := range map[string][]byte{
		"a flipped bit in the database": flipped,
		"a flipped bit in the hash":     wrongHash,
		"truncated in the database":     snapshotBytes(3)[:6000],
		"truncated in the hash":         snapshotBytes(3)[:3*4096+10],
		"without its hash":              snapshotBytes(3)[:3*4096],
		"empty":                         nil,
	} {
		h := newTrailingHash()
		writeInChunks(h, b, rand.New(rand.NewPCG(1, 2))) //nolint:gosec // chunk sizes, seeded to repeat
		if _, _, err := h.verify(); !errors.Is(err, ErrSnapshotCorrupt) {
			t.Errorf("%s: verify() = %v, want ErrSnapshotCorrupt", name, err)
		}
	}
}
