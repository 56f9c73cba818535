package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"text/template"
	"time"
)

// Every package's files that come from the source tree exist, every
// daemon package ships a unit the systemd test checks, and every
// maintainer script renders into a script the shell accepts.
func TestPackageTable(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, p := range packages() {
		if names[p.name] {
			t.Errorf("package %s twice", p.name)
		}
		names[p.name] = true
		for _, f := range p.files {
			dir, _, _ := strings.Cut(f.src, "/")
			if dir == "systemd" || dir == "etc" || dir == "lintian" {
				if _, err := os.Stat(filepath.Join(root, "packaging", f.src)); err != nil {
					t.Errorf("%s: %v", p.name, err)
				}
			}
			if strings.ContainsAny(f.src, "*?[") != strings.HasSuffix(f.dst, "/") {
				t.Errorf("%s: %s -> %s: a glob goes into a folder, a file to a path", p.name, f.src, f.dst)
			}
		}
		for _, d := range p.depends {
			if !slicesContains(packages(), d) {
				t.Errorf("%s depends on %s, which is not one of the packages", p.name, d)
			}
		}
		if p.daemon == nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, "packaging", "systemd", p.daemon.Unit)); err != nil {
			t.Errorf("%s: unit: %v", p.name, err)
		}
		for _, tmpl := range []string{"daemon-postinst.sh", "daemon-prerm.sh", "daemon-postrm.sh"} {
			src, err := os.ReadFile(filepath.Join(root, "packaging", "scripts", tmpl))
			if err != nil {
				t.Fatal(err)
			}
			tp := template.Must(template.New(tmpl).Option("missingkey=error").Parse(string(src)))
			var out bytes.Buffer
			if err := tp.Execute(&out, p.daemon); err != nil {
				t.Errorf("%s %s: %v", p.name, tmpl, err)
				continue
			}
			sh := exec.Command("sh", "-n")
			sh.Stdin = &out
			if msg, err := sh.CombinedOutput(); err != nil {
				t.Errorf("%s %s: sh -n: %v\n%s", p.name, tmpl, err, msg)
			}
		}
	}
	if err := exec.Command("sh", "-n", filepath.Join(root, "packaging", "scripts", "common-postinst.sh")).Run(); err != nil {
		t.Errorf("common-postinst.sh: %v", err)
	}
}

func slicesContains(ps []pkg, name string) bool {
	for _, p := range ps {
		if p.name == name {
			return true
		}
	}
	return false
}

// The version of a checkout: a tag's, a later commit's, and a commit's
// without any tag, each ordering after the one before it.
func TestGitVersion(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org", "GIT_COMMITTER_DATE=2026-12-07T10:11:12Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	run("commit", "-q", "--allow-empty", "-m", "one")
	v, err := gitVersion(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^0\.0\.0~git20261207101112\.[0-9a-f]{7}$`).MatchString(v) {
		t.Errorf("untagged: %q", v)
	}
	run("tag", "v1.2.3")
	if v, err = gitVersion(dir); err != nil || v != "1.2.3" {
		t.Errorf("tagged: %q, %v", v, err)
	}
	run("commit", "-q", "--allow-empty", "-m", "two")
	run("commit", "-q", "--allow-empty", "-m", "three")
	if v, err = gitVersion(dir); err != nil || !regexp.MustCompile(`^1\.2\.3\+git2\.[0-9a-f]{7}$`).MatchString(v) {
		t.Errorf("after the tag: %q, %v", v, err)
	}
	for _, bad := range []string{"v1.0", "1.0-1", "1.0 beta", "", "x1"} {
		if validVersion.MatchString(bad) {
			t.Errorf("version %q accepted", bad)
		}
	}
}

// Debian's copyright text names the Apache licence instead of copying it,
// keeping a module's own notice around it.
func TestDebianLicences(t *testing.T) {
	apache := "\n                                 Apache License\n                           Version 2.0, January 2004\n" +
		"TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION\n... END OF TERMS AND CONDITIONS\n"
	in := "mod a v1: LICENSE\n" + apache + "   Copyright 2020 A\n\nmod b v2: LICENSE\nMIT text\n"
	out := debianLicences(in)
	if strings.Contains(out, "TERMS AND CONDITIONS") {
		t.Errorf("Apache text kept:\n%s", out)
	}
	for _, want := range []string{"/usr/share/common-licenses/Apache-2.0", "Copyright 2020 A", "MIT text"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q missing:\n%s", want, out)
		}
	}
}

// A command's page keeps its help as printed, with roff's special
// characters made plain.
func TestHelpPage(t *testing.T) {
	help := "Usage: sbatch [OPTIONS...] script\n.dot leads\n  -A, --account=name  charge job to \\ account\n"
	page := helpPage("sbatch", "submit a batch script", help, "1.2.3", time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC))
	for _, want := range []string{
		`.TH SBATCH 1 "December 2026" "Drover 1.2.3"`,
		"sbatch \\- submit a batch script",
		"\\&.dot leads",
		"\\-A, \\-\\-account=name  charge job to \\e account",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	if _, err := exec.LookPath("groff"); err == nil {
		cmd := exec.Command("groff", "-man", "-Tutf8", "-ww", "-z")
		cmd.Stdin = strings.NewReader(page)
		if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("groff: %v\n%s", err, out)
		}
	}
}

func TestWrap(t *testing.T) {
	got := wrap("aaa bbb ccc ddd", 7)
	if got != "aaa bbb\nccc ddd" {
		t.Errorf("wrap: %q", got)
	}
}
