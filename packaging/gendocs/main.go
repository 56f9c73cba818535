// Command gendocs writes drover's manual pages (man1/drover.1 and one per
// subcommand, cobra's generator) and its shell completions (bash, zsh,
// fish) into a folder, for the packages: go run ./packaging/gendocs -out DIR.
// SOURCE_DATE_EPOCH, when set, dates the pages (reproducible builds).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/droverhq/drover/internal/daemon"
	"github.com/droverhq/drover/internal/drovercmd"
)

func main() {
	out := flag.String("out", "", "folder to write man1/ and completions/ into")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "usage: gendocs -out DIR")
		os.Exit(2)
	}
	if err := generate(drovercmd.Root(), *out, pageDate()); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

// pageDate is SOURCE_DATE_EPOCH's time, else now.
func pageDate() time.Time {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(n, 0).UTC()
		}
	}
	return time.Now().UTC()
}

// generate writes root's pages and completions under dir.
func generate(root *cobra.Command, dir string, date time.Time) error {
	man := filepath.Join(dir, "man1")
	comp := filepath.Join(dir, "completions")
	for _, d := range []string{man, comp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	header := &doc.GenManHeader{Title: "DROVER", Section: "1", Source: "Drover " + daemon.Version, Manual: "Drover Manual", Date: &date}
	root.DisableAutoGenTag = true
	if err := doc.GenManTree(root, header, man); err != nil {
		return fmt.Errorf("manual pages: %w", err)
	}
	for name, gen := range map[string]func(*os.File) error{
		"drover.bash": func(f *os.File) error { return root.GenBashCompletionV2(f, true) },
		"_drover":     func(f *os.File) error { return root.GenZshCompletion(f) },
		"drover.fish": func(f *os.File) error { return root.GenFishCompletion(f, true) },
	} {
		f, err := os.Create(filepath.Join(comp, name))
		if err != nil {
			return err
		}
		err = gen(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("completion %s: %w", name, err)
		}
	}
	return nil
}
