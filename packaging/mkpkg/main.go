// Command mkpkg builds Drover's deb and rpm packages with nfpm: it builds
// the programs for each architecture, stages them with the units, the
// configuration, the manual pages and the maintainer scripts, and writes
// one package per role (packages.go). `make package` runs it:
//
//	go run ./packaging/mkpkg -out dist [-arch amd64,arm64] [-format deb,rpm] [-version 1.2.3] [-sign-key KEY.asc]
//
// The version comes from git (vX.Y.Z tags) unless -version names one.
// The cgo plugins (GPU, PMIx) are built where a C compiler for the
// architecture is at hand and skipped, with a line saying so, where not.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	var o options
	arches := flag.String("arch", "amd64,arm64", "architectures, comma-separated (amd64, arm64)")
	formats := flag.String("format", "deb,rpm", "package formats, comma-separated")
	flag.StringVar(&o.out, "out", "dist", "folder the packages are written to")
	flag.StringVar(&o.version, "version", "", "package version (default: from git tags)")
	flag.StringVar(&o.debCompression, "deb-compression", "xz", "the debs' compression: xz, gzip, zstd or none")
	flag.StringVar(&o.signKey, "sign-key", "", "armoured OpenPGP private key to sign the rpms with (passphrase in $DROVER_SIGN_PASSPHRASE); debs are signed by their repository")
	flag.Parse()
	o.arches = strings.Split(*arches, ",")
	o.formats = strings.Split(*formats, ",")
	o.log = os.Stdout
	built, err := run(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkpkg:", err)
		os.Exit(1)
	}
	for _, p := range built {
		fmt.Println(p)
	}
}

// repoRoot is the module's root: mkpkg runs from it or below it.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(d, "packaging", "mkpkg")); err == nil {
				return d, nil
			}
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("not inside drover's source tree: %s", dir)
		}
	}
}

// sourceDate is SOURCE_DATE_EPOCH, else the last commit's time, else now:
// it dates the files, pages and changelog (reproducible builds).
func sourceDate(root string) time.Time {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		var n int64
		if _, err := fmt.Sscan(s, &n); err == nil {
			return time.Unix(n, 0).UTC()
		}
	}
	if out, err := git(root, "log", "-1", "--format=%ct"); err == nil {
		var n int64
		if _, err := fmt.Sscan(out, &n); err == nil {
			return time.Unix(n, 0).UTC()
		}
	}
	return time.Now().UTC().Truncate(time.Second)
}
