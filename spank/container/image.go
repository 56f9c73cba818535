package container

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// readyMark marks an unpacked image as complete.
const readyMark = ".drover-ready"

// Image is a prepared root file system.
type Image struct {
	Rootfs   string
	ReadOnly bool
}

// Prepare makes the root file system of image available under dir (the
// container's folder) and returns it. A directory is used in place,
// read-only. A tar archive (plain or gzipped) or a squashfs file is
// unpacked into dir/rootfs, once: a later call finds it ready. An empty
// image means the container must already be in dir.
func Prepare(image, dir string) (Image, error) {
	rootfs := filepath.Join(dir, "rootfs")
	if _, err := os.Stat(filepath.Join(dir, readyMark)); err == nil {
		ro, _ := os.ReadFile(filepath.Join(dir, readyMark))
		if p := strings.TrimSpace(string(ro)); p != "" {
			return Image{Rootfs: p, ReadOnly: true}, nil
		}
		return Image{Rootfs: rootfs}, nil
	}
	if image == "" {
		return Image{}, errNoImage
	}
	st, err := os.Stat(image)
	if err != nil {
		return Image{}, fmt.Errorf("--container-image: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Image{}, fmt.Errorf("container folder: %w", err)
	}
	if st.IsDir() {
		abs, err := filepath.Abs(image)
		if err != nil {
			return Image{}, err
		}
		if err := os.WriteFile(filepath.Join(dir, readyMark), []byte(abs+"\n"), 0o600); err != nil {
			return Image{}, err
		}
		return Image{Rootfs: abs, ReadOnly: true}, nil
	}
	// Unpack beside the final place and rename, so that a step that
	// races this one never sees half an image.
	tmp, err := os.MkdirTemp(dir, "unpack-")
	if err != nil {
		return Image{}, fmt.Errorf("container folder: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := unpack(image, tmp); err != nil {
		return Image{}, fmt.Errorf("--container-image=%s: %w", image, err)
	}
	if err := os.Rename(tmp, rootfs); err != nil && !errors.Is(err, os.ErrExist) && !isNotEmpty(err) {
		return Image{}, fmt.Errorf("container folder: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, readyMark), nil, 0o600); err != nil {
		return Image{}, err
	}
	return Image{Rootfs: rootfs}, nil
}

func isNotEmpty(err error) bool {
	var le *os.LinkError
	return errors.As(err, &le) && strings.Contains(le.Err.Error(), "not empty")
}

// unpack extracts image into dest by its first bytes: squashfs with
// unsquashfs, a tar archive (gzipped or not) in Go.
func unpack(image, dest string) error {
	f, err := os.Open(image)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	head, _ := br.Peek(512)
	switch {
	case bytes.HasPrefix(head, []byte("hsqs")):
		f.Close()
		out, err := exec.Command("unsquashfs", "-no-progress", "-quiet", "-f", "-d", dest, image).CombinedOutput()
		if err != nil {
			return fmt.Errorf("unsquashfs: %w: %s", err, strings.TrimSpace(string(out)))
		}
		return nil
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return err
		}
		return untar(zr, dest)
	case len(head) >= 262 && string(head[257:262]) == "ustar":
		return untar(br, dest)
	}
	return errors.New("not a directory, tar archive or squashfs image")
}

// untar extracts a tar stream into dest, keeping owners and modes, and
// refusing entries that would land outside dest.
func untar(r io.Reader, dest string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read tar: %w", err)
		}
		target, err := within(dest, h.Name)
		if err != nil {
			return err
		}
		if err := noLinkedParents(dest, target); err != nil {
			return err
		}
		mode := os.FileMode(h.Mode & 0o7777)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("extract %s: %w", h.Name, err)
			}
		case tar.TypeSymlink:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			_ = os.Remove(target)
			if err := os.Symlink(h.Linkname, target); err != nil {
				return err
			}
			continue // no chmod or chown through a link
		case tar.TypeLink:
			src, err := within(dest, h.Linkname)
			if err != nil {
				return err
			}
			_ = os.Remove(target)
			if err := os.Link(src, target); err != nil {
				return err
			}
			continue
		default:
			// Device nodes, fifos: the runtime makes /dev itself.
			continue
		}
		if err := os.Lchown(target, h.Uid, h.Gid); err != nil && !errors.Is(err, os.ErrPermission) {
			return err
		}
		if err := os.Chmod(target, mode); err != nil {
			return err
		}
	}
}

// within joins name to dest, refusing a name that climbs out of it.
func within(dest, name string) (string, error) {
	clean := filepath.Clean("/" + name)
	target := filepath.Join(dest, clean)
	if target != dest && !strings.HasPrefix(target, dest+string(filepath.Separator)) {
		return "", fmt.Errorf("tar entry %q leaves the image", name)
	}
	return target, nil
}

// noLinkedParents refuses a target below a symbolic link inside dest: an
// archive that made "a" a link to "/" must not write "a/etc/passwd" on
// the host.
func noLinkedParents(dest, target string) error {
	rel, err := filepath.Rel(dest, filepath.Dir(target))
	if err != nil || rel == "." {
		return err
	}
	p := dest
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if st.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("tar entry %s lies below the link %s", target, p)
		}
	}
	return nil
}

// imageEnv reads the image's /etc/environment (KEY=VALUE lines, values
// optionally quoted), the variables the image sets.
func imageEnv(rootfs string) []string {
	data, err := os.ReadFile(filepath.Join(rootfs, "etc", "environment"))
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "export "))
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" || strings.HasPrefix(k, "#") || strings.ContainsAny(k, " \t") {
			continue
		}
		if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
			v = v[1 : len(v)-1]
		}
		out = append(out, k+"="+v)
	}
	return out
}
