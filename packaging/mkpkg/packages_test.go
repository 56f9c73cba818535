package main

import (
	"bytes"
	"crypto"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// The packages as CI builds them for this machine's architecture, twice
// (0.1.0 and 0.2.0, for the upgrade), the rpms signed with a key made for
// the test: the linters find no error in them, the signatures verify, and
// they install, run and upgrade in a throwaway root keeping a
// controller's state, and make docs/INSTALL.md's three-host cluster.
func TestPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every program twice")
	}
	for _, tool := range []string{"go", "dpkg-deb"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	dir := t.TempDir()
	keyFile := signingKey(t, dir)
	t.Setenv("DROVER_SIGN_PASSPHRASE", "test passphrase")
	// Both versions at once: linking and compressing take one core
	// each.
	v1, v2 := filepath.Join(dir, "0.1.0"), filepath.Join(dir, "0.2.0")
	errs := make(chan error, 2)
	for _, out := range []string{v1, v2} {
		go func() {
			// gzip rather than xz: the same package to dpkg and
			// lintian, built in a tenth of the time.
			_, err := run(options{out: out, version: filepath.Base(out), arches: []string{runtime.GOARCH},
				formats: []string{"deb", "rpm"}, signKey: keyFile, debCompression: "gzip", log: io.Discard})
			if err != nil {
				err = fmt.Errorf("packages %s: %w", filepath.Base(out), err)
			}
			errs <- err
		}()
	}
	if err := errors.Join(<-errs, <-errs); err != nil {
		t.Fatal(err)
	}
	debs, _ := filepath.Glob(filepath.Join(v2, "*.deb"))
	rpms, _ := filepath.Glob(filepath.Join(v2, "*.rpm"))
	// drover-mpi-pmix is built only where libpmix is installed.
	if len(debs) < 7 || len(debs) != len(rpms) {
		t.Fatalf("packages: %v %v", debs, rpms)
	}

	// The checks below are independent of each other (each install in a
	// root and namespaces of its own): they run side by side, two at a
	// time on two cores (go test's -parallel).
	t.Run("lintian", func(t *testing.T) {
		t.Parallel()
		if _, err := exec.LookPath("lintian"); err != nil {
			t.Skip("lintian is not installed (.ci/run installs it)")
		}
		cmd := exec.Command("lintian", append([]string{"--fail-on", "error", "--tag-display-limit", "0"}, debs...)...)
		// lintian leaves scratch files (mldbm-elf-*) in its temporary
		// folder: the test's own, removed with it.
		cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil || hasTag(out, "E:") {
			t.Errorf("lintian: %v\n%s", err, out)
		}
	})
	// rpm (and rpmlint, through it) checks signatures against the keys in
	// its database: a database of the test's own, named in a
	// ~/.rpmmacros of the test's own, holds the test key.
	home := filepath.Join(dir, "home")
	rpmdb := filepath.Join(dir, "rpmdb")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".rpmmacros"), []byte("%_dbpath "+rpmdb+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rpmEnv := append(os.Environ(), "HOME="+home)
	haveRPM := false
	if _, err := exec.LookPath("rpmkeys"); err == nil {
		haveRPM = true
		cmd := exec.Command("rpmkeys", "--import", filepath.Join(dir, "key.pub"))
		cmd.Env = rpmEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("rpmkeys --import: %v\n%s", err, out)
		}
	}
	t.Run("rpmlint", func(t *testing.T) {
		t.Parallel()
		if _, err := exec.LookPath("rpmlint"); err != nil || !haveRPM {
			t.Skip("rpmlint or rpm is not installed (.ci/run installs them)")
		}
		root, _ := repoRoot()
		cmd := exec.Command("rpmlint", append([]string{"-c", filepath.Join(root, "packaging", "rpmlint.toml")}, rpms...)...)
		cmd.Env = rpmEnv
		out, err := cmd.CombinedOutput()
		if err != nil || hasTag(out, "E:") {
			t.Errorf("rpmlint: %v\n%s", err, out)
		}
	})
	t.Run("signatures", func(t *testing.T) {
		t.Parallel()
		if !haveRPM {
			t.Skip("no rpmkeys (Debian's rpm package)")
		}
		for _, r := range rpms {
			cmd := exec.Command("rpmkeys", "--checksig", r)
			cmd.Env = rpmEnv
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "signatures OK") {
				t.Errorf("rpmkeys --checksig %s: %v\n%s", filepath.Base(r), err, out)
			}
		}
	})
	for _, format := range []string{"deb", "rpm"} {
		t.Run("install "+format, func(t *testing.T) {
			t.Parallel()
			if os.Geteuid() != 0 {
				t.Skip("needs root: namespaces and a throwaway root")
			}
			tool := map[string]string{"deb": "dpkg", "rpm": "rpm"}[format]
			for _, c := range []string{"unshare", "chroot", "setpriv", tool} {
				if _, err := exec.LookPath(c); err != nil {
					t.Skipf("no %s", c)
				}
			}
			out, err := exec.Command("testdata/install.sh", format, v1, v2).CombinedOutput()
			if err != nil || !bytes.HasSuffix(bytes.TrimSpace(out), []byte("OK")) {
				t.Errorf("install.sh %s: %v\n%s", format, err, out)
			}
		})
	}
	// docs/INSTALL.md's cluster of three hosts, from the packages.
	t.Run("three hosts", func(t *testing.T) {
		t.Parallel()
		if os.Geteuid() != 0 {
			t.Skip("needs root: namespaces and throwaway roots")
		}
		for _, c := range []string{"unshare", "nsenter", "chroot", "setpriv", "ip", "dpkg"} {
			if _, err := exec.LookPath(c); err != nil {
				t.Skipf("no %s", c)
			}
		}
		out, err := exec.Command("testdata/cluster.sh", v2).CombinedOutput()
		if err != nil || !bytes.HasSuffix(bytes.TrimSpace(out), []byte("OK")) {
			t.Errorf("cluster.sh: %v\n%s", err, out)
		}
	})
}

// hasTag reports whether a linter's output has a line with tag (E: for
// an error).
func hasTag(out []byte, tag string) bool {
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, tag) || strings.Contains(line, ": "+tag+" ") {
			return true
		}
	}
	return false
}

// signingKey makes an OpenPGP key for the test, writes the private key
// (encrypted, returning its file) and the public key (key.pub) into dir.
func signingKey(t *testing.T, dir string) string {
	t.Helper()
	cfg := &packet.Config{Algorithm: packet.PubKeyAlgoRSA, RSABits: 2048, DefaultHash: crypto.SHA256}
	e, err := openpgp.NewEntity("Drover test", "packages test", "test@example.org", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var pub bytes.Buffer
	w, _ := armor.Encode(&pub, openpgp.PublicKeyType, nil)
	if err := e.Serialize(w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := os.WriteFile(filepath.Join(dir, "key.pub"), pub.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := e.EncryptPrivateKeys([]byte("test passphrase"), cfg); err != nil {
		t.Fatal(err)
	}
	var priv bytes.Buffer
	w, _ = armor.Encode(&priv, openpgp.PrivateKeyType, nil)
	if err := e.SerializePrivateWithoutSigning(w, cfg); err != nil {
		t.Fatal(err)
	}
	w.Close()
	keyFile := filepath.Join(dir, "key.asc")
	if err := os.WriteFile(keyFile, priv.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return keyFile
}
