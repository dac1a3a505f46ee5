package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCopyKeepsContentAndMode(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "cpb"), filepath.Join(dir, "util-cpb")
	if err := os.WriteFile(src, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := copyFile(src, dst); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(dst)
	info, _ := os.Stat(dst)
	if err != nil || string(data) != "binary" || info.Mode().Perm() != 0o755 {
		t.Fatalf("copy: %q, %v, err %v", data, info.Mode(), err)
	}
}
