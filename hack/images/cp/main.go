// Command cp copies one file, as `cp [-Rv] SOURCE DEST`: the part of cp that OLM's utility
// image must provide (`/bin/cp -Rv /bin/cpb /util/cpb` in bundle unpack Jobs, `cp
// /bin/copy-content ...` in catalog pods). Flags are accepted and ignored; the mode is kept.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	var paths []string
	for _, arg := range os.Args[1:] {
		if !strings.HasPrefix(arg, "-") {
			paths = append(paths, arg)
		}
	}
	if len(paths) != 2 {
		fmt.Fprintln(os.Stderr, "usage: cp [-Rv] SOURCE DEST")
		os.Exit(2)
	}
	if err := copyFile(paths[0], paths[1]); err != nil {
		fmt.Fprintln(os.Stderr, "cp:", err)
		os.Exit(1)
	}
	fmt.Printf("'%s' -> '%s'\n", paths[0], paths[1])
}

func copyFile(source, dest string) error {
	in, err := os.Open(source)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dest, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
