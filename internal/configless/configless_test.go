package configless

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/droverapi"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/slurmconf"
)

func TestParseServers(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    []Server
		wantErr string
	}{
		"host":            {in: "ctl", want: []Server{{"ctl", 6817}}},
		"host and port":   {in: "ctl:7000", want: []Server{{"ctl", 7000}}},
		"list in order":   {in: "ctl-primary:6817,ctl-backup", want: []Server{{"ctl-primary", 6817}, {"ctl-backup", 6817}}},
		"ipv6":            {in: "[::1]:7001,[fe80::1]", want: []Server{{"::1", 7001}, {"fe80::1", 6817}}},
		"blank items":     {in: " ctl ,,", want: []Server{{"ctl", 6817}}},
		"empty":           {in: "", wantErr: "names no controller"},
		"bad port":        {in: "ctl:x", wantErr: `port "x"`},
		"port zero":       {in: "ctl:0", wantErr: `port "0"`},
		"port too big":    {in: "ctl:70000", wantErr: `port "70000"`},
		"no host":         {in: ":6817", wantErr: "not a host name"},
		"open bracket":    {in: "[::1", wantErr: "no ]"},
		"junk after ipv6": {in: "[::1]x", wantErr: `"x" after`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseServers(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseServers(%q) error = %v, want one containing %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseServers(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

// fakeResolver answers SRV lookups from a table, as a site's DNS would.
type fakeResolver struct {
	asked []string
	recs  []*net.SRV
	err   error
}

func (f *fakeResolver) LookupSRV(_ context.Context, service, proto, name string) (string, []*net.SRV, error) {
	f.asked = append(f.asked, service+"|"+proto+"|"+name)
	return name, f.recs, f.err
}

func TestLookupServers(t *testing.T) {
	r := &fakeResolver{recs: []*net.SRV{
		{Target: "ctl-backup.example.org.", Port: 6817, Priority: 10},
		{Target: "ctl-primary.example.org.", Port: 7817, Priority: 0},
		{Target: ".", Port: 6817, Priority: 20}, // "no service" target
	}}
	got, err := LookupServers(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	want := []Server{{"ctl-primary.example.org", 7817}, {"ctl-backup.example.org", 6817}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	// The bare name, so that the resolver applies the search domains.
	if diff := cmp.Diff([]string{"||_slurmctld._tcp"}, r.asked); diff != "" {
		t.Errorf("lookups (-want +got):\n%s", diff)
	}

	_, err = LookupServers(context.Background(), &fakeResolver{err: &net.DNSError{Err: "no such host", Name: SRVRecord, IsNotFound: true}})
	if err == nil || !strings.Contains(err.Error(), "DNS SRV lookup of _slurmctld._tcp failed") {
		t.Errorf("failed lookup: error = %v", err)
	}
	_, err = LookupServers(context.Background(), &fakeResolver{recs: []*net.SRV{{Target: ".", Port: 1}}})
	if err == nil || !strings.Contains(err.Error(), "no usable record") {
		t.Errorf("no usable record: error = %v", err)
	}
}

func TestValidName(t *testing.T) {
	good := []string{"slurm.conf", "gres.conf", "nodes.conf", "prolog.sh", "ca_cert.pem"}
	bad := []string{"", ".", "..", "../etc/passwd", "/etc/passwd", "a/b", "a\\b", "a\x00b", ".hidden",
		"slurm.key", "slurm.jwks", "SLURM.KEY", "ctld_cert_key.pem", strings.Repeat("x", 256)}
	for _, n := range good {
		if err := ValidName(n); err != nil {
			t.Errorf("ValidName(%q) = %v, want nil", n, err)
		}
	}
	for _, n := range bad {
		if err := ValidName(n); err == nil {
			t.Errorf("ValidName(%q) = nil, want an error", n)
		}
	}
}

func TestCheck(t *testing.T) {
	conf := nodeproto.ConfigFile{Name: "slurm.conf", Content: "ClusterName=c\n", Exists: true}
	tests := map[string]struct {
		r       *nodeproto.ConfigReply
		wantErr string
	}{
		"good":                {r: &nodeproto.ConfigReply{Files: []nodeproto.ConfigFile{conf, {Name: "gres.conf"}}}},
		"nil":                 {wantErr: "empty"},
		"no slurm.conf":       {r: &nodeproto.ConfigReply{Files: []nodeproto.ConfigFile{{Name: "gres.conf", Exists: true}}}, wantErr: "no slurm.conf"},
		"slurm.conf missing":  {r: &nodeproto.ConfigReply{Files: []nodeproto.ConfigFile{{Name: "slurm.conf"}}}, wantErr: "no slurm.conf"},
		"escape":              {r: &nodeproto.ConfigReply{Files: []nodeproto.ConfigFile{conf, {Name: "../x", Exists: true}}}, wantErr: "is a path"},
		"key":                 {r: &nodeproto.ConfigReply{Files: []nodeproto.ConfigFile{conf, {Name: "slurm.key", Exists: true}}}, wantErr: "keys are not distributed"},
		"twice":               {r: &nodeproto.ConfigReply{Files: []nodeproto.ConfigFile{conf, conf}}, wantErr: "slurm.conf twice"},
		"absent with content": {r: &nodeproto.ConfigReply{Files: []nodeproto.ConfigFile{conf, {Name: "x", Content: "y"}}}, wantErr: "has content"},
		"too many":            {r: &nodeproto.ConfigReply{Files: make([]nodeproto.ConfigFile, MaxFiles+1)}, wantErr: "more than"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := Check(tc.r)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Check = %v", err)
				}
				return
			}
			if !errors.Is(err, ErrBadReply) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Check = %v, want ErrBadReply containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestIncludes(t *testing.T) {
	content := "ClusterName=c\nInclude nodes.conf\n  include\tparts.conf # the partitions\n" +
		"Include /etc/slurm/abs.conf\nInclude ../up.conf\ninclude glob*.conf\nIncludeX no.conf\n#Include commented.conf\nInclude\n"
	want := []string{"nodes.conf", "parts.conf"}
	if diff := cmp.Diff(want, Includes(content)); diff != "" {
		t.Errorf("Includes (-want +got):\n%s", diff)
	}
}

// writeFiles makes a configuration folder.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	slurmConf := "ClusterName=c\nSlurmctldHost=ctl\nSlurmctldParameters=enable_configless\nSlurmdSpoolDir=/var/spool/d/%n\n" +
		"Prolog=prolog.sh\nEpilog=/abs/epilog.sh\nTaskProlog=tprolog.sh\nInclude nodes.conf\n" +
		"NodeName=n1 CPUs=1\nPartitionName=p Nodes=ALL\n"
	writeFiles(t, dir, map[string]string{
		"slurm.conf": slurmConf, "nodes.conf": "# nodes\n", "gres.conf": "Name=gpu\n",
		"plugstack.conf": "include missing.conf\n", "prolog.sh": "#!/bin/sh\n",
		"slurm.key": "secret-never-sent-secret-never-sent", "unrelated.conf": "x",
	})
	sc, err := slurmconf.Load(filepath.Join(dir, "slurm.conf"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Load(filepath.Join(dir, "slurm.conf"), sc)
	if err != nil {
		t.Fatal(err)
	}
	summary := func(r *nodeproto.ConfigReply) []string {
		var out []string
		for _, f := range r.Files {
			tag := f.Name
			switch {
			case f.Execute:
				tag += " (script)"
			case !f.Exists:
				tag += " (absent)"
			}
			out = append(out, tag)
		}
		return out
	}
	wantSlurmd := []string{"acct_gather.conf (absent)", "cgroup.conf (absent)", "cli_filter.lua (absent)", "gres.conf",
		"helpers.conf (absent)", "job_container.conf (absent)", "mpi.conf (absent)", "namespace.yaml (absent)",
		"oci.conf (absent)", "plugstack.conf", "missing.conf (absent)", "scrun.lua (absent)", "slurm.conf", "nodes.conf",
		"topology.conf (absent)", "topology.yaml (absent)", "prolog.sh (script)", "tprolog.sh (absent)"}
	if diff := cmp.Diff(wantSlurmd, summary(s.Slurmd)); diff != "" {
		t.Errorf("to node daemons (-want +got):\n%s", diff)
	}
	wantClients := []string{"cli_filter.lua (absent)", "oci.conf (absent)", "plugstack.conf", "missing.conf (absent)",
		"scrun.lua (absent)", "slurm.conf", "nodes.conf", "topology.conf (absent)", "topology.yaml (absent)"}
	if diff := cmp.Diff(wantClients, summary(s.Clients)); diff != "" {
		t.Errorf("to login hosts (-want +got):\n%s", diff)
	}
	if s.Slurmd.SlurmdSpoolDir != "/var/spool/d/%n" || s.Clients.SlurmdSpoolDir != "" {
		t.Errorf("spool dirs: %q, %q", s.Slurmd.SlurmdSpoolDir, s.Clients.SlurmdSpoolDir)
	}
	if err := Check(s.Slurmd); err != nil {
		t.Errorf("the controller's own reply is refused: %v", err)
	}
}

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf-cache")
	// An old copy that the controller no longer has, and a link an
	// attacker on the host left where a file will go.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{"gres.conf": "old"})
	target := filepath.Join(t.TempDir(), "target")
	writeFiles(t, filepath.Dir(target), map[string]string{"target": "untouched"})
	if err := os.Symlink(target, filepath.Join(dir, "cgroup.conf")); err != nil {
		t.Fatal(err)
	}
	r := &nodeproto.ConfigReply{Files: []nodeproto.ConfigFile{
		{Name: "slurm.conf", Content: "ClusterName=c\n", Exists: true},
		{Name: "gres.conf"},
		{Name: "cgroup.conf", Content: "ConstrainDevices=yes\n", Exists: true},
		{Name: "prolog.sh", Content: "#!/bin/sh\n", Exists: true, Execute: true},
	}}
	old := unixUmask(0o077) // the mode must not depend on it
	defer unixUmask(old)
	if err := Write(dir, r); err != nil {
		t.Fatal(err)
	}
	modes := map[string]fs.FileMode{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		fi, err := os.Lstat(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		modes[e.Name()] = fi.Mode()
	}
	want := map[string]fs.FileMode{"slurm.conf": 0o644, "cgroup.conf": 0o644, "prolog.sh": 0o755}
	if diff := cmp.Diff(want, modes); diff != "" {
		t.Errorf("cache files and modes (-want +got):\n%s", diff)
	}
	if b, _ := os.ReadFile(target); string(b) != "untouched" {
		t.Errorf("a link in the cache was followed: target holds %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "cgroup.conf")); string(b) != "ConstrainDevices=yes\n" {
		t.Errorf("cgroup.conf = %q", b)
	}

	// A refused reply writes nothing.
	bad := &nodeproto.ConfigReply{Files: []nodeproto.ConfigFile{
		{Name: "slurm.conf", Content: "changed", Exists: true},
		{Name: "../escaped", Content: "x", Exists: true},
	}}
	if err := Write(dir, bad); !errors.Is(err, ErrBadReply) {
		t.Fatalf("Write(escaping reply) = %v, want ErrBadReply", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "slurm.conf")); string(b) != "ClusterName=c\n" {
		t.Errorf("a refused reply changed slurm.conf to %q", b)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escaped")); err == nil {
		t.Errorf("a file was written outside the cache")
	}
	if !Cached(dir) || Cached(t.TempDir()) {
		t.Errorf("Cached is wrong")
	}
}

// signer makes a node daemon's client with a test key.
func testClient(t *testing.T, issuer string) (*nodeproto.Client, *msgauth.Verifier) {
	t.Helper()
	keys := clusterkey.NewHolder(clusterkey.FromSecret([]byte("0123456789abcdef0123456789abcdef")))
	c := nodeproto.NewClient(&msgauth.Signer{Keys: keys, Issuer: issuer}, nil)
	return c, &msgauth.Verifier{Keys: keys, Audience: msgauth.Controller}
}

func serverOf(t *testing.T, h http.HandlerFunc) Server {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(ts.URL, "http://"))
	p, _ := strconv.Atoi(port)
	return Server{Host: host, Port: p}
}

// replyAs answers r with reply signed by signer for aud (the
// requester, unless a test misdirects it).
func replyAs(t *testing.T, w http.ResponseWriter, r *http.Request, signer *msgauth.Signer, aud string, reply any) {
	body, _ := json.Marshal(reply)
	tok, err := SignReply(signer, aud, r, body)
	if err != nil {
		t.Error(err)
	}
	w.Header().Set(msgauth.Header, tok)
	w.Write(body)
}

func TestFetch(t *testing.T) {
	c, v := testClient(t, msgauth.Node("n1"))
	ctl := &msgauth.Signer{Keys: c.Signer.Keys, Issuer: msgauth.Controller}
	good := &nodeproto.ConfigReply{Files: []nodeproto.ConfigFile{{Name: "slurm.conf", Content: "ClusterName=c\n", Exists: true}}}
	ok := serverOf(t, func(w http.ResponseWriter, r *http.Request) {
		if _, err := v.VerifyRequest(r, nodeproto.MaxBody); err != nil {
			nodeproto.Fail(w, http.StatusUnauthorized, err)
			return
		}
		replyAs(t, w, r, ctl, msgauth.Node("n1"), good)
	})
	// A controller that is down, then one in standby (an election), are
	// skipped for the next; each is sent a token of its own (v refuses
	// one it saw).
	down := Server{Host: "127.0.0.1", Port: 1}
	standby := serverOf(t, func(w http.ResponseWriter, r *http.Request) {
		if _, err := v.VerifyRequest(r, nodeproto.MaxBody); err != nil {
			nodeproto.Fail(w, http.StatusUnauthorized, err)
			return
		}
		w.Header().Set(droverapi.StandbyHeader, "1")
		nodeproto.Fail(w, http.StatusServiceUnavailable, errors.New("in standby"))
	})
	got, i, err := Fetch(context.Background(), c, []Server{down, standby, ok})
	if err != nil {
		t.Fatal(err)
	}
	if i != 2 {
		t.Errorf("answered by server %d, want 2", i)
	}
	if diff := cmp.Diff(good, got); diff != "" {
		t.Errorf("reply (-want +got):\n%s", diff)
	}

	tests := map[string]struct {
		h       http.HandlerFunc
		wantErr string
	}{
		"refused": {h: func(w http.ResponseWriter, r *http.Request) {
			nodeproto.Fail(w, http.StatusForbidden, errors.New("ConfigLess mode is disabled in slurm configuration."))
		}, wantErr: "HTTP 403: ConfigLess mode is disabled in slurm configuration."},
		"garbage": {h: func(w http.ResponseWriter, r *http.Request) {
			tok, _ := SignReply(ctl, msgauth.Node("n1"), r, []byte("<html>hello</html>"))
			w.Header().Set(msgauth.Header, tok)
			w.Write([]byte("<html>hello</html>"))
		}, wantErr: "not a configuration"},
		"oversized": {h: func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"files":[{"name":"slurm.conf","exists":true,"content":"`))
			w.Write([]byte(strings.Repeat("x", MaxReply)))
		}, wantErr: "larger than"},
		"escaping": {h: func(w http.ResponseWriter, r *http.Request) {
			replyAs(t, w, r, ctl, msgauth.Node("n1"), nodeproto.ConfigReply{Files: []nodeproto.ConfigFile{
				{Name: "slurm.conf", Exists: true}, {Name: "../../etc/cron.d/x", Exists: true}}})
		}, wantErr: "is a path"},
		"unsigned": {h: func(w http.ResponseWriter, r *http.Request) { nodeproto.Reply(w, http.StatusOK, good) },
			wantErr: "not signed by the controller: Invalid authentication credential: no credential"},
		"signed for another node": {h: func(w http.ResponseWriter, r *http.Request) {
			replyAs(t, w, r, ctl, msgauth.Node("n2"), good)
		}, wantErr: "not for slurmd:n1"},
		"signed by a node": {h: func(w http.ResponseWriter, r *http.Request) {
			replyAs(t, w, r, &msgauth.Signer{Keys: c.Signer.Keys, Issuer: msgauth.Node("n2")}, msgauth.Node("n1"), good)
		}, wantErr: "signed by slurmd:n2"},
		"signed with another key": {h: func(w http.ResponseWriter, r *http.Request) {
			other := clusterkey.NewHolder(clusterkey.FromSecret([]byte("another-key-another-key-another-k")))
			replyAs(t, w, r, &msgauth.Signer{Keys: other, Issuer: msgauth.Controller}, msgauth.Node("n1"), good)
		}, wantErr: "not signed by the controller"},
		"a reply to another request": {h: func(w http.ResponseWriter, r *http.Request) {
			old := httptest.NewRequest(http.MethodPost, nodeproto.PathConfig, nil)
			old.Header.Set(msgauth.Header, "an earlier request's token")
			replyAs(t, w, old, ctl, msgauth.Node("n1"), good)
		}, wantErr: "not signed by the controller"},
		"tampered": {h: func(w http.ResponseWriter, r *http.Request) {
			body, _ := json.Marshal(good)
			tok, _ := SignReply(ctl, msgauth.Node("n1"), r, body)
			w.Header().Set(msgauth.Header, tok)
			w.Write(bytes.Replace(body, []byte("ClusterName=c"), []byte("ClusterName=x"), 1))
		}, wantErr: "the body is not the one signed"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, _, err := Fetch(context.Background(), c, []Server{serverOf(t, tc.h)})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Fetch error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}
