package testutil

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
)

// StaticBusybox finds a statically linked busybox (Debian's
// busybox-static), the only kind that runs in an image without libc;
// "" when there is none.
func StaticBusybox() string {
	for _, p := range []string{"/bin/busybox", "/usr/bin/busybox"} {
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		static := true
		for _, prog := range f.Progs {
			static = static && prog.Type != elf.PT_INTERP
		}
		f.Close()
		if static {
			return p
		}
	}
	return ""
}

// BusyboxRootfs makes a container root file system under dir/rootfs from
// the static busybox bb: /bin/busybox with a link per applet, the usual
// empty mount points, and files (path inside the image to contents).
func BusyboxRootfs(dir, bb string, applets []string, files map[string]string) (string, error) {
	root := filepath.Join(dir, "rootfs")
	for _, d := range []string{"bin", "etc", "tmp", "proc", "sys", "dev"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return "", err
		}
	}
	if err := os.Chmod(filepath.Join(root, "tmp"), 0o1777); err != nil {
		return "", err
	}
	data, err := os.ReadFile(bb)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(root, "bin", "busybox"), data, 0o755); err != nil {
		return "", err
	}
	for _, a := range applets {
		if err := os.Symlink("busybox", filepath.Join(root, "bin", a)); err != nil {
			return "", fmt.Errorf("applet %s: %w", a, err)
		}
	}
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	return root, nil
}
