package main

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb" // registers the deb packager
	"github.com/goreleaser/nfpm/v2/files"
	_ "github.com/goreleaser/nfpm/v2/rpm" // registers the rpm packager
)

const (
	maintainer = "Drover maintainers <drover-maintainers@users.noreply.github.com>"
	homepage   = "https://github.com/droverhq/drover"
	license    = "LicenseRef-Drover"
)

// copyright stages the copyright file every package carries: Drover's
// notice, then the licences of Go and of every module the shipped
// programs link (a Go program carries its dependencies' code).
func (b builder) copyright() error {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{.Path}}\t{{.Version}}\t{{.Dir}}{{end}}",
		"./cmd/drover", "./cmd/commands/...", "./cmd/drover-spank-nccl", "./cmd/drover-spank-container", "./cmd/drover-gres-nvml", "./cmd/drover-mpi-pmix")
	cmd.Dir = b.root
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+b.arch)
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go list: %w", err)
	}
	type module struct{ path, version, dir string }
	seen := map[string]module{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 || f[0] == "github.com/droverhq/drover" {
			continue
		}
		seen[f[0]] = module{f[0], f[1], f[2]}
	}
	paths := make([]string, 0, len(seen))
	for p := range seen {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var text strings.Builder
	fmt.Fprintf(&text, "Drover %s\n%s\n\nCopyright: the Drover authors.\n\n", b.version, homepage)
	text.WriteString("The programs in this package are written in Go and carry the code\n" +
		"of the Go standard library and of the modules below, under their\n" +
		"licences, which follow.\n")
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return fmt.Errorf("go env GOROOT: %w", err)
	}
	if err := appendLicence(&text, "Go standard library", runtime.Version(), strings.TrimSpace(string(goroot))); err != nil {
		return err
	}
	for _, p := range paths {
		m := seen[p]
		if err := appendLicence(&text, m.path, m.version, m.dir); err != nil {
			return err
		}
	}
	dir := filepath.Join(b.stage, "doc")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	full := text.String()
	if err := os.WriteFile(filepath.Join(dir, "copyright"), []byte(full), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "copyright.deb"), []byte(debianLicences(full)), 0o644)
}

// apacheText is the Apache License 2.0's text, from its title to the end
// of its terms.
var apacheText = regexp.MustCompile(`(?s)\s*Apache License\s+Version 2\.0, January 2004.*?END OF TERMS AND CONDITIONS`)

// debianLicences is the copyright text for Debian, which holds the
// common licences once, in /usr/share/common-licenses, and wants them
// named rather than copied (policy 12.5): each full Apache 2.0 text
// becomes a reference to it. The notices around it stay.
func debianLicences(text string) string {
	return apacheText.ReplaceAllString(text, "\nLicensed under the Apache License, Version 2.0; on Debian systems its full\ntext is in /usr/share/common-licenses/Apache-2.0.")
}

// appendLicence adds a module's licence files (LICENSE, COPYING,
// NOTICE...) from its root; a module without one is an error, so that no
// licence goes missing unseen.
func appendLicence(w *strings.Builder, name, version, dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("licence of %s: %w", name, err)
	}
	found := false
	for _, e := range ents {
		n := strings.ToUpper(e.Name())
		if e.IsDir() || !(strings.HasPrefix(n, "LICENSE") || strings.HasPrefix(n, "LICENCE") || strings.HasPrefix(n, "COPYING") || strings.HasPrefix(n, "NOTICE")) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "\n-------------------------------------------------------------------------\n%s %s: %s\n\n", name, version, e.Name())
		w.Write(bytes.TrimRight(data, "\n"))
		w.WriteString("\n")
		found = true
	}
	if !found {
		return fmt.Errorf("module %s %s has no licence file in %s", name, version, dir)
	}
	return nil
}

// changelog writes the package's changelog (chglog's YAML, which nfpm
// turns into Debian's changelog.Debian.gz and RPM's %changelog, both of
// which the linters want): this version, built from this commit.
func (b builder) changelog(dir string) (string, error) {
	commit, err := git(b.root, "rev-parse", "--short=12", "HEAD")
	if err != nil {
		commit = "unknown"
	}
	text := fmt.Sprintf("- semver: %s-1\n  date: %s\n  packager: %s\n  deb:\n    urgency: medium\n    distributions: [unstable]\n  changes:\n    - commit: %s\n      note: Built from commit %s.\n",
		b.version, b.date.Format(time.RFC3339), maintainer, commit, commit)
	path := filepath.Join(dir, "changelog.yaml")
	return path, os.WriteFile(path, []byte(text), 0o644)
}

// renderScripts writes p's maintainer scripts and returns nfpm's.
func (b builder) renderScripts(p pkg) (nfpm.Scripts, error) {
	var s nfpm.Scripts
	dir := filepath.Join(b.stage, "scripts", p.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return s, err
	}
	render := func(tmpl string) (string, error) {
		src, err := os.ReadFile(filepath.Join(b.root, "packaging", "scripts", tmpl))
		if err != nil {
			return "", err
		}
		t, err := template.New(tmpl).Option("missingkey=error").Parse(string(src))
		if err != nil {
			return "", err
		}
		var buf bytes.Buffer
		if p.daemon != nil {
			if err := t.Execute(&buf, p.daemon); err != nil {
				return "", fmt.Errorf("%s: %w", tmpl, err)
			}
		} else {
			buf.Write(src)
		}
		path := filepath.Join(dir, tmpl)
		return path, os.WriteFile(path, buf.Bytes(), 0o755)
	}
	var err error
	switch {
	case p.common:
		s.PostInstall, err = render("common-postinst.sh")
	case p.daemon != nil:
		if s.PostInstall, err = render("daemon-postinst.sh"); err != nil {
			return s, err
		}
		if s.PreRemove, err = render("daemon-prerm.sh"); err != nil {
			return s, err
		}
		s.PostRemove, err = render("daemon-postrm.sh")
	}
	return s, err
}

// pack writes p in format into out and returns the file's path.
func (b builder) pack(p pkg, format string, o options) (string, error) {
	scripts, err := b.renderScripts(p)
	if err != nil {
		return "", err
	}
	changelog, err := b.changelog(filepath.Join(b.stage, "doc"))
	if err != nil {
		return "", err
	}
	var contents files.Contents
	add := func(f file) {
		kind := f.kind
		if format == "rpm" && kind == "" && strings.HasPrefix(f.dst, "/usr/share/man/") {
			kind = "doc"
		}
		c := &files.Content{Source: filepath.Join(b.stage, f.src), Destination: f.dst, Type: kind, Packager: f.packager}
		if f.mode != 0 {
			c.FileInfo = &files.ContentFileInfo{Mode: os.FileMode(f.mode), MTime: b.date}
		}
		contents = append(contents, c)
	}
	for _, f := range p.files {
		if !strings.ContainsAny(f.src, "*?[") {
			add(f)
			continue
		}
		// A glob names a folder as destination: each match goes in it.
		matches, err := filepath.Glob(filepath.Join(b.stage, f.src))
		if err != nil || len(matches) == 0 {
			return "", fmt.Errorf("%s: no file matches %s", p.name, f.src)
		}
		for _, m := range matches {
			g := f
			g.src, _ = filepath.Rel(b.stage, m)
			g.dst = f.dst + filepath.Base(m)
			add(g)
		}
	}
	add(file{src: "doc/copyright.deb", dst: "/usr/share/doc/" + p.name + "/copyright", packager: "deb", mode: 0o644})
	add(file{src: "doc/copyright", dst: "/usr/share/licenses/" + p.name + "/COPYRIGHT", kind: "license", packager: "rpm", mode: 0o644})

	var depends, suggests, conflicts []string
	for _, d := range p.depends {
		if format == "deb" {
			depends = append(depends, fmt.Sprintf("%s (= %s-1)", d, b.version))
		} else {
			depends = append(depends, fmt.Sprintf("%s = %s-1", d, b.version))
		}
	}
	if format == "deb" {
		depends = append(depends, p.debDepends...)
		suggests, conflicts = p.debSuggests, p.debConflicts
	} else {
		depends = append(depends, p.rpmDepends...)
		suggests, conflicts = p.rpmSuggests, p.rpmConflicts
	}
	arch := b.arch
	if p.noarch {
		arch = "all"
	}
	info := &nfpm.Info{
		Name:          p.name,
		Arch:          arch,
		Changelog:     changelog,
		Platform:      "linux",
		Version:       b.version,
		VersionSchema: "none",
		Release:       "1",
		Section:       "admin",
		Priority:      "optional",
		Maintainer:    maintainer,
		Vendor:        "Drover",
		Homepage:      homepage,
		License:       license,
		Description:   p.summary + "\n" + wrap(p.description, 72),
		MTime:         b.date,
		Overridables: nfpm.Overridables{
			Depends:    depends,
			Recommends: p.recommends,
			Suggests:   suggests,
			Conflicts:  conflicts,
			Contents:   contents,
			Scripts:    scripts,
			RPM: nfpm.RPM{
				Summary:     p.summary,
				Group:       "System Environment/Base",
				Packager:    maintainer,
				Compression: "zstd",
				BuildHost:   "drover",
			},
			Deb: nfpm.Deb{Compression: cmp.Or(o.debCompression, "xz")},
		},
	}
	// An rpm carries its signature; a deb does not (Debian signs the
	// repository's Release file instead, and lintian refuses a deb with
	// a signature member), so a signing key signs the rpms only.
	if o.signKey != "" {
		info.RPM.Signature.KeyFile = o.signKey
		info.RPM.Signature.KeyPassphrase = os.Getenv("DROVER_SIGN_PASSPHRASE")
	}
	if format == "rpm" {
		// RPM's description is the paragraph alone; the summary has a tag
		// of its own.
		info.Description = wrap(p.description, 72)
	}
	if err := nfpm.PrepareForPackager(nfpm.WithDefaults(info), format); err != nil {
		return "", err
	}
	packager, err := nfpm.Get(format)
	if err != nil {
		return "", err
	}
	name := packager.ConventionalFileName(info)
	path := filepath.Join(o.out, name)
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := packager.Package(info, f); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	return path, f.Close()
}

// wrap breaks text into lines of at most width characters, at spaces.
func wrap(text string, width int) string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}
