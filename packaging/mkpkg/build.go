package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"
)

type options struct {
	out, version string
	// signKey is an armoured OpenPGP private key file the rpms are
	// signed with (its passphrase in $DROVER_SIGN_PASSPHRASE).
	signKey string
	// debCompression is the debs' (xz when empty, as Debian's own).
	debCompression  string
	arches, formats []string
	log             io.Writer
}

// run builds every package of o and returns the files written.
func run(o options) ([]string, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	if o.version == "" {
		if o.version, err = gitVersion(root); err != nil {
			return nil, err
		}
	}
	if !validVersion.MatchString(o.version) {
		return nil, fmt.Errorf("version %q: want digits first, then letters, digits and . + ~ only", o.version)
	}
	for _, f := range o.formats {
		if f != "deb" && f != "rpm" {
			return nil, fmt.Errorf("format %q: want deb or rpm", f)
		}
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "drover-mkpkg-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	date := sourceDate(root)
	var written []string
	for i, arch := range o.arches {
		if arch != "amd64" && arch != "arm64" {
			return nil, fmt.Errorf("architecture %q: want amd64 or arm64", arch)
		}
		stage := filepath.Join(work, arch)
		b := builder{root: root, stage: stage, arch: arch, version: o.version, date: date, log: o.log}
		if err := b.stageAll(); err != nil {
			return nil, fmt.Errorf("%s: %w", arch, err)
		}
		for _, p := range packages() {
			if p.noarch && i > 0 {
				continue
			}
			if p.needs != "" {
				if _, err := os.Stat(filepath.Join(stage, p.needs)); err != nil {
					continue // said why when it was not built
				}
			}
			for _, format := range o.formats {
				start := time.Now()
				path, err := b.pack(p, format, o)
				fmt.Fprintf(o.log, "mkpkg: %s: %s in %.1fs\n", arch, filepath.Base(path), time.Since(start).Seconds())
				if err != nil {
					return nil, fmt.Errorf("%s %s %s: %w", p.name, format, arch, err)
				}
				written = append(written, path)
			}
		}
	}
	return written, nil
}

// validVersion is what both formats accept as a version.
var validVersion = regexp.MustCompile(`^[0-9][A-Za-z0-9.+~]*$`)

// gitVersion is the package version of the checked-out commit: 1.2.3 at
// tag v1.2.3, 1.2.3+git5.abcdef1 five commits after it, and without any
// tag 0.0.0~gitYYYYMMDDhhmmss.abcdef1 (sorting by commit time, below any
// release).
func gitVersion(root string) (string, error) {
	desc, err := git(root, "describe", "--tags", "--long", "--match", "v[0-9]*", "--abbrev=7")
	if err == nil {
		m := regexp.MustCompile(`^v([0-9][0-9A-Za-z.]*)-([0-9]+)-g([0-9a-f]+)$`).FindStringSubmatch(desc)
		if m == nil {
			return "", fmt.Errorf("git describe: %q is not vX.Y.Z-N-gHASH", desc)
		}
		if m[2] == "0" {
			return m[1], nil
		}
		return m[1] + "+git" + m[2] + "." + m[3], nil
	}
	out, err := git(root, "log", "-1", "--format=%cd.%h", "--date=format-local:%Y%m%d%H%M%S", "--abbrev=7")
	if err != nil {
		return "", fmt.Errorf("no version: not a git checkout (give -version): %w", err)
	}
	return "0.0.0~git" + out, nil
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TZ=UTC")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// builder stages one architecture's files.
type builder struct {
	root, stage, arch, version string
	date                       time.Time
	log                        io.Writer
	// env is added to the go commands' environment.
	env []string
	// plainExe builds ordinary executables, not position-independent
	// ones (the commands: see buildMode).
	plainExe bool
}

// stageAll builds the programs and gathers every file the packages take.
func (b builder) stageAll() error {
	steps := []struct {
		what string
		do   func() error
	}{
		{"programs", b.buildPrograms},
		{"cgo plugins", b.buildCgoPlugins},
		{"packaging files", b.copyPackagingFiles},
		{"manual pages", b.manualPages},
		{"copyright", b.copyright},
	}
	for _, s := range steps {
		start := time.Now()
		if err := s.do(); err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
		fmt.Fprintf(b.log, "mkpkg: %s: %s in %.1fs\n", b.arch, s.what, time.Since(start).Seconds())
	}
	return nil
}

func (b builder) ldflags() string {
	return "-s -w -buildid= -X github.com/droverhq/drover/internal/daemon.Version=" + b.version
}

// The daemons and plugins are position-independent, as Debian's and
// Fedora's policies want (address-space randomisation for programs that
// serve the network or run as root): the pure Go ones too, linked by Go
// itself, which makes them dynamically linked executables with no
// library to load. The commands are not: a position-independent sbatch
// starts 2.3 ms (15%) later (docs/BENCHMARKS.md), they run as the user
// who starts them, and their start-up is what scripts wait on. They are
// statically linked, which lintian is told (packaging/lintian) and
// rpmlint's settings accept.
const buildMode = "-buildmode=pie"

// goBuild runs go build for b's architecture.
func (b builder) goBuild(cgo bool, cc string, tags string, out string, pkgs ...string) error {
	args := []string{"build", "-trimpath", "-ldflags", b.ldflags()}
	if !b.plainExe {
		// (Go's default, an ordinary executable, takes no flag: go build
		// refuses -buildmode=exe for several packages at once.)
		args = append(args, buildMode)
	}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	args = append(args, "-o", out)
	args = append(args, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Dir = b.root
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+b.arch, "CGO_ENABLED=0")
	cmd.Env = append(cmd.Env, b.env...)
	if cgo {
		cmd.Env = append(cmd.Env, "CGO_ENABLED=1", "CGO_CFLAGS=-O2 -g -Wno-deprecated-declarations")
		if cc != "" {
			cmd.Env = append(cmd.Env, "CC="+cc)
		}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", strings.Join(pkgs, " "), err, stderr.String())
	}
	return nil
}

func (b builder) buildPrograms() error {
	for _, d := range []string{"sbin", "bin", "libexec"} {
		if err := os.MkdirAll(filepath.Join(b.stage, d), 0o755); err != nil {
			return err
		}
	}
	if err := b.goBuild(false, "", "", filepath.Join(b.stage, "sbin", "drover"), "./cmd/drover"); err != nil {
		return err
	}
	commands := b
	commands.plainExe = true
	if err := commands.goBuild(false, "", "", filepath.Join(b.stage, "bin")+"/", "./cmd/commands/..."); err != nil {
		return err
	}
	for _, p := range []string{"drover-spank-nccl", "drover-spank-container"} {
		if err := b.goBuild(false, "", "", filepath.Join(b.stage, "libexec", p), "./cmd/"+p); err != nil {
			return err
		}
	}
	// Every command has its summary for its manual page, and no other
	// program sits in /usr/bin.
	ents, err := os.ReadDir(filepath.Join(b.stage, "bin"))
	if err != nil {
		return err
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
		if _, ok := commandPrograms[e.Name()]; !ok {
			return fmt.Errorf("cmd/commands/%s has no summary in commandPrograms", e.Name())
		}
	}
	if len(names) != len(commandPrograms) {
		return fmt.Errorf("built commands %v, want those of commandPrograms", names)
	}
	return nil
}

// cCompiler is the C compiler that builds for b's architecture: the
// system's own for the machine's, a cross compiler (Debian's
// gcc-aarch64-linux-gnu...) for the other; "" when there is none.
func (b builder) cCompiler() (cc string, native bool) {
	if b.arch == runtime.GOARCH {
		if _, err := exec.LookPath("gcc"); err == nil {
			return "gcc", true
		}
		return "", true
	}
	cross := map[string]string{"arm64": "aarch64-linux-gnu-gcc", "amd64": "x86_64-linux-gnu-gcc"}[b.arch]
	if _, err := exec.LookPath(cross); err == nil {
		return cross, false
	}
	return "", false
}

// buildCgoPlugins builds the GPU plugin (go-nvml is cgo) and the PMIx
// plugin (it links libpmix), each where it can be built.
func (b builder) buildCgoPlugins() error {
	cc, native := b.cCompiler()
	if cc == "" {
		fmt.Fprintf(b.log, "mkpkg: %s: no C compiler for this architecture: drover-gres-nvml and drover-mpi-pmix not built\n", b.arch)
		return nil
	}
	if err := b.goBuild(true, cc, "", filepath.Join(b.stage, "libexec", "drover-gres-nvml"), "./cmd/drover-gres-nvml"); err != nil {
		return err
	}
	// libpmix's headers and library must be the target's: pkg-config
	// answers for the machine's own.
	if !native || exec.Command("pkg-config", "--exists", "pmix").Run() != nil {
		fmt.Fprintf(b.log, "mkpkg: %s: no libpmix for this architecture (libpmix-dev): drover-mpi-pmix not built\n", b.arch)
		return nil
	}
	// pmix.pc (Debian's) links with an rpath to the library's private
	// folder; the library is on the loader's path too, and a packaged
	// program must not carry a search path of its own (Debian policy
	// 10.2). A pmix.pc of our own keeps the flags and drops the rpath.
	pcDir := filepath.Join(b.stage, "pkgconfig")
	if err := pmixPC(pcDir); err != nil {
		return err
	}
	// go's build cache does not key a cgo package by pkg-config's
	// answer: a build of the plugin with the same flags and Debian's
	// pmix.pc (make build, the end-to-end tests) would be taken from the
	// cache, rpath and all. A define of this build's own keys it apart.
	b.env = append(b.env, "PKG_CONFIG_PATH="+pcDir, "CGO_CPPFLAGS=-DDROVER_PMIX_PC_WITHOUT_RPATH")
	return b.goBuild(true, cc, "pmix", filepath.Join(b.stage, "libexec", "drover-mpi-pmix"), "./cmd/drover-mpi-pmix")
}

// pmixPC writes into dir a pmix.pc with the system one's compiler flags
// and the library alone to link.
func pmixPC(dir string) error {
	cflags, err := exec.Command("pkg-config", "--cflags", "pmix").Output()
	if err != nil {
		return fmt.Errorf("pkg-config --cflags pmix: %w", err)
	}
	version, err := exec.Command("pkg-config", "--modversion", "pmix").Output()
	if err != nil {
		return fmt.Errorf("pkg-config --modversion pmix: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	pc := fmt.Sprintf("Name: pmix\nDescription: PMIx, linked from the loader's path\nVersion: %s\nCflags: %s\nLibs: -lpmix\n",
		strings.TrimSpace(string(version)), strings.TrimSpace(string(cflags)))
	return os.WriteFile(filepath.Join(dir, "pmix.pc"), []byte(pc), 0o644)
}

// copyPackagingFiles stages packaging/systemd, etc and lintian.
func (b builder) copyPackagingFiles() error {
	for _, dir := range []string{"systemd", "etc", "lintian"} {
		src := filepath.Join(b.root, "packaging", dir)
		ents, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(b.stage, dir), 0o755); err != nil {
			return err
		}
		for _, e := range ents {
			if e.IsDir() || strings.HasSuffix(e.Name(), ".go") {
				continue
			}
			data, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(b.stage, dir, e.Name()), data, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// gzipFile writes data to path compressed as Debian wants manual pages
// and changelogs: best compression, no name, no time.
func gzipFile(path string, data []byte) error {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// manualPages writes drover's pages and completions (packaging/gendocs)
// and a page for each command made of its --help, all compressed.
func (b builder) manualPages() error {
	raw := filepath.Join(b.stage, "gendocs")
	cmd := exec.Command("go", "run", "./packaging/gendocs", "-out", raw)
	cmd.Dir = b.root
	cmd.Env = append(os.Environ(), fmt.Sprintf("SOURCE_DATE_EPOCH=%d", b.date.Unix()))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("gendocs: %w\n%s", err, out)
	}
	man := filepath.Join(b.stage, "man")
	if err := os.MkdirAll(man, 0o755); err != nil {
		return err
	}
	pages, err := filepath.Glob(filepath.Join(raw, "man1", "*.1"))
	if err != nil {
		return err
	}
	for _, p := range pages {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := gzipFile(filepath.Join(man, filepath.Base(p)+".gz"), data); err != nil {
			return err
		}
	}
	if err := os.Rename(filepath.Join(raw, "completions"), filepath.Join(b.stage, "completions")); err != nil {
		return err
	}
	// The commands' help is the same on every architecture: it is read
	// from programs built for this machine.
	helpBin := filepath.Join(b.stage, "help-bin")
	host := b
	host.arch = runtime.GOARCH
	host.plainExe = true
	if err := host.goBuild(false, "", "", helpBin+"/", "./cmd/commands/..."); err != nil {
		return err
	}
	names := make([]string, 0, len(commandPrograms))
	for n := range commandPrograms {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		help, err := commandHelp(filepath.Join(helpBin, name))
		if err != nil {
			return fmt.Errorf("%s --help: %w", name, err)
		}
		page := helpPage(name, commandPrograms[name], help, b.version, b.date)
		if err := gzipFile(filepath.Join(man, name+".1.gz"), []byte(page)); err != nil {
			return err
		}
	}
	return os.RemoveAll(helpBin)
}

// commandHelp runs a command's --help where no cluster is configured.
func commandHelp(bin string) (string, error) {
	cmd := exec.Command(bin, "--help")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "SLURM_CONF=/nonexistent/slurm.conf", "HOME=/nonexistent", "LANG=C"}
	out, err := cmd.Output()
	if err != nil {
		return "", err
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return "", fmt.Errorf("printed nothing")
	}
	return string(out), nil
}

// helpPage is a command's manual page: its summary and its --help as
// the command prints it.
func helpPage(name, summary, help, version string, date time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH %s 1 \"%s\" \"Drover %s\" \"Drover Manual\"\n", strings.ToUpper(name), date.Format("January 2006"), version)
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", name, summary)
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.B %s\n[\\fIOPTIONS\\fR...]\n", name)
	b.WriteString(".SH DESCRIPTION\n")
	fmt.Fprintf(&b, "%s is Drover's drop-in for Slurm's command of the same name: it takes Slurm's options, prints Slurm's output formats and exits with Slurm's codes. The options as\n.B %s \\-\\-help\nprints them:\n", name, name)
	b.WriteString(".PP\n.nf\n")
	for _, line := range strings.Split(strings.TrimRight(help, "\n"), "\n") {
		line = strings.ReplaceAll(line, `\`, `\e`)
		line = strings.ReplaceAll(line, "-", `\-`)
		if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
			line = `\&` + line
		}
		b.WriteString(line + "\n")
	}
	b.WriteString(".fi\n")
	b.WriteString(".SH SEE ALSO\n.BR drover (1)\n")
	return b.String()
}
