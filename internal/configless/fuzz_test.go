package configless

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseServers checks that --conf-server never panics and that
// every server it accepts has a host without separators and a port.
func FuzzParseServers(f *testing.F) {
	for _, s := range []string{"ctl", "ctl:6817,backup", "[::1]:7000", "[", ":", ",,", "a:65536", "[::1]]:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		servers, err := ParseServers(s)
		if err != nil {
			return
		}
		if len(servers) == 0 {
			t.Fatalf("%q: no servers and no error", s)
		}
		for _, srv := range servers {
			if srv.Host == "" || strings.ContainsAny(srv.Host, ",/ ") || srv.Port <= 0 || srv.Port > 65535 {
				t.Fatalf("%q: accepted %+v", s, srv)
			}
		}
	})
}

// FuzzDecodeReply feeds arbitrary controller replies to the node's
// decoder and cache: a reply is either refused or written, and what is
// written stays inside the cache folder, with no key among it.
func FuzzDecodeReply(f *testing.F) {
	for _, s := range []string{
		`{"files":[{"name":"slurm.conf","content":"ClusterName=c\n","exists":true}]}`,
		`{"files":[{"name":"slurm.conf","exists":true},{"name":"gres.conf"}]}`,
		`{"files":[{"name":"slurm.conf","exists":true},{"name":"../x","exists":true}]}`,
		`{"files":[{"name":"slurm.conf","exists":true},{"name":"p.sh","exists":true,"execute":true}]}`,
		`{"files":null}`, `[]`, `garbage`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeReply(data)
		if err != nil {
			return
		}
		root := t.TempDir()
		dir := filepath.Join(root, "cache")
		if err := Write(dir, r); err != nil {
			t.Fatalf("a checked reply was not written: %v", err)
		}
		entries, err := os.ReadDir(root)
		if err != nil || len(entries) != 1 || entries[0].Name() != "cache" {
			t.Fatalf("something was written beside the cache: %v", entries)
		}
		files, _ := os.ReadDir(dir)
		for _, e := range files {
			if ValidName(e.Name()) != nil {
				t.Fatalf("cache holds %q", e.Name())
			}
		}
	})
}
