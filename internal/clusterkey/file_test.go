package clusterkey

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKeyPath(t *testing.T) {
	tests := map[string]string{
		"/etc/slurm/slurm.conf":    "/etc/slurm/slurm.key",
		"/etc/drover/x.conf":       "/etc/drover/slurm.key",
		"slurm.conf":               "slurm.key",
		"/etc/slurm/../slurm.conf": "/etc/slurm.key",
	}
	for conf, want := range tests {
		if got := KeyPath(conf); got != want {
			t.Errorf("KeyPath(%q) = %q, want %q", conf, got, want)
		}
	}
}

func TestWriteLoadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "slurm.key")
	if err := WriteKey(path); err != nil {
		t.Fatalf("WriteKey: %v", err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 || st.Size() != KeySize {
		t.Errorf("key file mode %v size %d, want 0600 and %d bytes", st.Mode().Perm(), st.Size(), KeySize)
	}
	key, err := loadSecret(path)
	if err != nil {
		t.Fatalf("LoadKey: %v", err)
	}

	err = WriteKey(path)
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), path) {
		t.Errorf("WriteKey over an existing key = %v, want fs.ErrExist naming %s", err, path)
	}
	again, _ := loadSecret(path)
	if !bytes.Equal(again, key) {
		t.Error("refused WriteKey changed the key")
	}

	other := filepath.Join(t.TempDir(), "slurm.key")
	WriteKey(other)
	otherKey, _ := loadSecret(other)
	if bytes.Equal(otherKey, key) {
		t.Error("two WriteKey calls made the same key")
	}
}

func TestLoadFileRefuses(t *testing.T) {
	tests := map[string]struct {
		data   []byte
		mode   fs.FileMode
		dir    bool
		absent bool
		want   error
		text   string
	}{
		"group readable":  {data: testKey, mode: 0o640, want: ErrBadKey, text: "key file is insecure: '%s' mode=0640"},
		"other readable":  {data: testKey, mode: 0o604, want: ErrBadKey, text: "key file is insecure: '%s' mode=0604"},
		"group writable":  {data: testKey, mode: 0o620, want: ErrBadKey, text: "insecure"},
		"world all":       {data: testKey, mode: 0o777, want: ErrBadKey, text: "insecure"},
		"short":           {data: testKey[:31], mode: 0o600, want: ErrBadKey, text: "'%s' holds 31 bytes, need at least 32"},
		"empty":           {mode: 0o600, want: ErrBadKey, text: "holds 0 bytes"},
		"huge":            {data: make([]byte, maxKeyFile+1), mode: 0o600, want: ErrBadKey, text: "over"},
		"directory":       {dir: true, want: ErrBadKey, text: "not a regular file"},
		"missing":         {absent: true, want: fs.ErrNotExist, text: "%s"},
		"read-only is ok": {data: testKey, mode: 0o400},
		"longer is ok":    {data: append(testKey, testKey...), mode: 0o600},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "slurm.key")
			switch {
			case tt.dir:
				if err := os.Mkdir(path, 0o700); err != nil {
					t.Fatal(err)
				}
			case !tt.absent:
				if err := os.WriteFile(path, tt.data, 0o600); err != nil {
					t.Fatal(err)
				}
				// Chmod, not WriteFile's mode, which the umask narrows.
				if err := os.Chmod(path, tt.mode); err != nil {
					t.Fatal(err)
				}
			}
			key, err := loadSecret(path)
			if tt.want == nil {
				if err != nil || !bytes.Equal(key, tt.data) {
					t.Errorf("LoadKey = %d bytes, %v; want the %d bytes written", len(key), err, len(tt.data))
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("LoadKey = %v, want %v", err, tt.want)
			}
			if want := strings.ReplaceAll(tt.text, "%s", path); !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
			if key != nil {
				t.Errorf("refused key returned %d bytes", len(key))
			}
		})
	}
}

// loadSecret is the one secret of a raw key file, as LoadFile reads it.
func loadSecret(path string) ([]byte, error) {
	r, err := LoadFile(path)
	if err != nil {
		return nil, err
	}
	return r.Keys[0].Secret, nil
}
