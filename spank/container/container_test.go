package container

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

func TestParseMounts(t *testing.T) {
	got, err := ParseMounts("/a:/b:ro,/c,/d:/e:rw, ")
	if err != nil {
		t.Fatal(err)
	}
	want := []Mount{{"/a", "/b", true}, {"/c", "/c", false}, {"/d", "/e", false}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{"a:/b", "/a:b", "/a:/b:x", "/a:/b:ro:z"} {
		if _, err := ParseMounts(bad); err == nil {
			t.Errorf("ParseMounts(%q) succeeded", bad)
		}
	}
}

func TestParseRequest(t *testing.T) {
	r, err := ParseRequest(map[string]string{OptImage: "/img", OptName: "bb", OptEnv: "A, B", OptNoMountHome: "", OptWorkdir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Wanted() || r.Image != "/img" || r.Name != "bb" || !r.NoMountHome || !cmp.Equal(r.HostEnv, []string{"A", "B"}) || r.Workdir != "/w" {
		t.Errorf("ParseRequest = %+v", r)
	}
	if r, _ := ParseRequest(map[string]string{}); r.Wanted() {
		t.Error("no options, yet a container")
	}
	for _, bad := range []map[string]string{
		{OptImage: "nvcr.io#nvidia/pytorch:24.01"},
		{OptName: "a/b"},
		{OptImage: "/i", OptWorkdir: "rel"},
		{OptImage: "/i", OptMounts: "x"},
	} {
		if _, err := ParseRequest(bad); err == nil {
			t.Errorf("ParseRequest(%v) succeeded", bad)
		}
	}
}

func TestExpand(t *testing.T) {
	v := Values{Bundle: "/spool/b dir", Rootfs: "/r", SpoolDir: "/spool", Node: "n1", User: "alice", JobID: 7, StepID: 2, UID: 1000, TaskID: 3}
	got, err := Expand("runc --root %m/runc run -b %b %n.%u.%j.%s.%t %U %r 100%%", v)
	if err != nil {
		t.Fatal(err)
	}
	if want := "runc --root /spool/runc run -b '/spool/b dir' n1.alice.7.2.3 1000 /r 100%"; got != want {
		t.Errorf("Expand = %q, want %q", got, want)
	}
	for _, bad := range []string{"x %", "%z"} {
		if _, err := Expand(bad, v); err == nil {
			t.Errorf("Expand(%q) succeeded", bad)
		}
	}
	if q := shellQuote("it's"); q != `'it'\''s'` {
		t.Errorf("shellQuote = %s", q)
	}
}

func TestOCIConf(t *testing.T) {
	rt, err := ParseOCIConf([]byte("IgnoreFileConfigJson=true\nRunTimeRun=\"crun run --bundle %b %n.%j.%s.%t\"\nRunTimeDelete=\"crun delete --force %n.%j.%s.%t\"\n"), "oci.conf")
	if err != nil {
		t.Fatal(err)
	}
	if rt.Run != "crun run --bundle %b %n.%j.%s.%t" || rt.Delete != "crun delete --force %n.%j.%s.%t" {
		t.Errorf("ParseOCIConf = %+v", rt)
	}
	if _, err := ParseOCIConf([]byte("RunTimeDelete=x\n"), "oci.conf"); err == nil {
		t.Error("oci.conf without RunTimeRun accepted")
	}
	def, err := DefaultRuntime("crun")
	if err != nil || !strings.Contains(def.Run, "crun --root %m/containers/crun run --bundle %b drover-%j.%s.%t") {
		t.Errorf("DefaultRuntime(crun) = %+v, %v", def, err)
	}
	if _, err := DefaultRuntime("docker"); err == nil {
		t.Error("DefaultRuntime(docker) accepted")
	}
	if _, err := ParseArgs([]string{"colour=red"}); err == nil {
		t.Error("unknown argument accepted")
	}
}

// tarOf builds an archive of entries.
func tarOf(t *testing.T, entries ...*tar.Header) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, h := range entries {
		body := []byte(nil)
		if h.Typeflag == tar.TypeReg {
			body = []byte("data of " + h.Name)
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write(body)
	}
	tw.Close()
	return b.Bytes()
}

func TestUnpackTar(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "img.tar")
	os.WriteFile(img, tarOf(t,
		&tar.Header{Name: "bin/", Typeflag: tar.TypeDir, Mode: 0o755},
		&tar.Header{Name: "bin/tool", Typeflag: tar.TypeReg, Mode: 0o755},
		&tar.Header{Name: "bin/alias", Typeflag: tar.TypeSymlink, Linkname: "tool"},
		&tar.Header{Name: "bin/hard", Typeflag: tar.TypeLink, Linkname: "bin/tool"},
	), 0o644)
	got, err := Prepare(img, filepath.Join(dir, "c"))
	if err != nil {
		t.Fatal(err)
	}
	if got.ReadOnly || got.Rootfs != filepath.Join(dir, "c", "rootfs") {
		t.Errorf("Prepare = %+v", got)
	}
	for _, f := range []string{"bin/tool", "bin/alias", "bin/hard"} {
		if b, err := os.ReadFile(filepath.Join(got.Rootfs, f)); err != nil || string(b) != "data of bin/tool" {
			t.Errorf("%s: %q, %v", f, b, err)
		}
	}
	// Ready: a second call reuses it, even without the image.
	if again, err := Prepare("", filepath.Join(dir, "c")); err != nil || again != got {
		t.Errorf("second Prepare = %+v, %v", again, err)
	}
	if _, err := Prepare("", filepath.Join(dir, "none")); err != errNoImage {
		t.Errorf("no image, no container: %v", err)
	}

	for name, entries := range map[string][]*tar.Header{
		"through link":  {{Name: "up", Typeflag: tar.TypeSymlink, Linkname: "/"}, {Name: "up/tmp/evil", Typeflag: tar.TypeReg, Mode: 0o644}},
		"hard link out": {{Name: "h", Typeflag: tar.TypeLink, Linkname: "../../etc/passwd"}},
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".tar")
		os.WriteFile(p, tarOf(t, entries...), 0o644)
		if _, err := Prepare(p, filepath.Join(dir, "bad", name)); err == nil {
			t.Errorf("%s: archive accepted", name)
		}
	}
	// A name that climbs is kept inside, as tar strips leading "../".
	climb := filepath.Join(dir, "climb.tar")
	os.WriteFile(climb, tarOf(t, &tar.Header{Name: "../../tmp/evil", Typeflag: tar.TypeReg, Mode: 0o644}), 0o644)
	if img, err := Prepare(climb, filepath.Join(dir, "climb")); err != nil {
		t.Error(err)
	} else if _, err := os.Stat(filepath.Join(img.Rootfs, "tmp", "evil")); err != nil {
		t.Errorf("climbing entry not kept inside: %v", err)
	}
	if _, err := os.Stat("/tmp/evil"); err == nil {
		t.Error("an archive wrote /tmp/evil")
	}
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, []byte("hello"), 0o644)
	if _, err := Prepare(junk, filepath.Join(dir, "j")); err == nil || !strings.Contains(err.Error(), "not a directory, tar archive or squashfs image") {
		t.Errorf("junk image: %v", err)
	}
}

func TestSpec(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "rootfs")
	os.MkdirAll(filepath.Join(root, "etc"), 0o755)
	os.MkdirAll(filepath.Join(root, "data"), 0o755)
	os.WriteFile(filepath.Join(root, "etc", "environment"), []byte("# comment\nexport PATH=\"/opt/bin:/bin\"\nKEEP=image\n"), 0o644)
	dev := filepath.Join(dir, "nvidia3")
	if err := unix.Mknod(dev, unix.S_IFCHR|0o666, int(unix.Mkdev(195, 3))); err != nil {
		t.Skipf("mknod: %v", err)
	}
	host := filepath.Join(dir, "host")
	os.MkdirAll(host, 0o755)
	r := &Request{Image: root, Mounts: []Mount{{Source: host, Destination: "/data", ReadOnly: true}}, HostEnv: []string{"KEEP"}, NoMountHome: true}
	s, err := Spec(Task{Request: r, Image: Image{Rootfs: root, ReadOnly: true}, Argv: []string{"python", "train.py"},
		Env: []string{"PATH=/usr/bin", "KEEP=host", "RANK=3"}, Cwd: "/data/run", UID: 1000, GID: 1000,
		Hostname: "n1", Devices: []string{dev}, Cgroup: "/drover/c/n1/job_7_step_0", TaskID: 3})
	if err != nil {
		t.Fatal(err)
	}
	if s.Process.Cwd != "/data/run" || s.Linux.CgroupsPath != "/drover/c/n1/job_7_step_0/task_3" || s.Hostname != "n1" || !s.Root.Readonly {
		t.Errorf("spec: cwd %q cgroup %q host %q", s.Process.Cwd, s.Linux.CgroupsPath, s.Hostname)
	}
	if diff := cmp.Diff([]string{"KEEP=host", "RANK=3", "PATH=/opt/bin:/bin"}, s.Process.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	var dests []string
	for _, m := range s.Mounts {
		dests = append(dests, m.Destination)
	}
	for _, want := range []string{"/proc", "/dev/shm", "/data", "/tmp"} {
		if !strings.Contains(strings.Join(dests, " "), want) {
			t.Errorf("no mount at %s: %v", want, dests)
		}
	}
	if len(s.Linux.Devices) != 1 || s.Linux.Devices[0].Path != dev || s.Linux.Devices[0].Major != 195 || s.Linux.Devices[0].Minor != 3 {
		t.Errorf("devices %+v", s.Linux.Devices)
	}
	allow := s.Linux.Resources.Devices
	if len(allow) != 2 || allow[0].Allow || !allow[1].Allow || *allow[1].Minor != 3 {
		t.Errorf("device rules %+v", allow)
	}
	if !hasNS(s, specs.MountNamespace) || !hasNS(s, specs.UTSNamespace) || hasNS(s, specs.NetworkNamespace) || hasNS(s, specs.IPCNamespace) {
		t.Errorf("namespaces %+v", s.Linux.Namespaces)
	}
	if err := WriteBundle(filepath.Join(dir, "b"), s); err != nil {
		t.Fatal(err)
	}
	// A mount point missing from a read-only directory image is refused.
	r.Mounts = []Mount{{Source: host, Destination: "/nowhere"}}
	if _, err := Spec(Task{Request: r, Image: Image{Rootfs: root, ReadOnly: true}, Argv: []string{"true"}}); err == nil {
		t.Error("mount outside a read-only image accepted")
	}
}

func hasNS(s *specs.Spec, t specs.LinuxNamespaceType) bool {
	for _, n := range s.Linux.Namespaces {
		if n.Type == t {
			return true
		}
	}
	return false
}

func FuzzParseMounts(f *testing.F) {
	f.Add("/a:/b:ro,/c")
	f.Add(":::,,")
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := ParseMounts(s)
		if err != nil {
			return
		}
		for _, m := range ms {
			if !filepath.IsAbs(m.Source) || !filepath.IsAbs(m.Destination) {
				t.Fatalf("relative mount %+v", m)
			}
		}
	})
}

func FuzzParseOCIConf(f *testing.F) {
	f.Add("RunTimeRun=\"runc run %b\"\n")
	f.Add("RunTimeRun=\n")
	f.Fuzz(func(t *testing.T, s string) {
		rt, err := ParseOCIConf([]byte(s), "oci.conf")
		if err == nil && strings.TrimSpace(rt.Run) == "" {
			t.Fatal("accepted without RunTimeRun")
		}
	})
}

func FuzzExpand(f *testing.F) {
	f.Add("runc run -b %b %n.%j.%s.%t")
	f.Add("%")
	f.Fuzz(func(t *testing.T, s string) {
		out, err := Expand(s, Values{Bundle: "/b", Node: "n'1"})
		if err == nil && strings.Contains(out, "n'1") && !strings.Contains(out, `'n'\''1'`) {
			t.Fatalf("unquoted value in %q", out)
		}
	})
}
