//go:build linux

package usercred

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// localEntry reads the /etc/passwd line of name without the package's
// parser, so that the test does not check the code against itself.
func localEntry(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Skipf("no /etc/passwd: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Split(line, ":"); len(f) == 7 && f[0] == name {
			return f
		}
	}
	t.Skipf("no %s in /etc/passwd", name)
	return nil
}

// idGroups returns what id(1) says the groups of name are.
func idGroups(t *testing.T, name string) []uint32 {
	t.Helper()
	out, err := exec.Command("id", "-G", name).Output()
	if err != nil {
		t.Skipf("id -G %s: %v", name, err)
	}
	var gids []uint32
	for _, f := range strings.Fields(string(out)) {
		g, err := strconv.ParseUint(f, 10, 32)
		if err != nil {
			t.Fatalf("id -G output %q", out)
		}
		gids = append(gids, uint32(g))
	}
	return gids
}

func TestLookupLocalAccounts(t *testing.T) {
	for _, name := range []string{"root", "nobody"} {
		t.Run(name, func(t *testing.T) {
			f := localEntry(t, name)
			uid, _ := strconv.ParseUint(f[2], 10, 32)
			gid, _ := strconv.ParseUint(f[3], 10, 32)
			want := &Identity{Name: name, UID: uint32(uid), GID: uint32(gid), Home: f[5], Shell: f[6], Groups: idGroups(t, name)}
			if want.Shell == "" {
				want.Shell = DefaultShell
			}
			sortGroups := cmp.Transformer("sort", func(id Identity) Identity {
				// id(1) and /etc/group need not agree on order
				// after the primary group.
				id.Groups = append(id.Groups[:1:1], slices.Sorted(slices.Values(id.Groups[1:]))...)
				return id
			})
			got, err := Lookup(uint32(uid))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got, sortGroups); diff != "" {
				t.Errorf("Lookup(%d) (-want +got):\n%s", uid, diff)
			}
			byName, err := LookupName(name)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, byName); diff != "" {
				t.Errorf("LookupName(%q) differs from Lookup(%d) (-uid +name):\n%s", name, uid, diff)
			}
		})
	}
}

func TestLookupUnknown(t *testing.T) {
	const uid = 3999999999
	if _, err := exec.Command("getent", "passwd", strconv.Itoa(uid)).Output(); err == nil {
		t.Skipf("uid %d exists here", uid)
	}
	tests := map[string]struct {
		lookup   func() (*Identity, error)
		wantText string
	}{
		"uid":        {lookup: func() (*Identity, error) { return Lookup(uid) }, wantText: "uid 3999999999"},
		"name":       {lookup: func() (*Identity, error) { return LookupName("drover-no-such-user") }, wantText: `"drover-no-such-user"`},
		"empty name": {lookup: func() (*Identity, error) { return LookupName("") }, wantText: "empty name"},
		"option-like name": {
			lookup:   func() (*Identity, error) { return LookupName("-s") },
			wantText: `"-s"`,
		},
		"digits as name": {
			// getent would read it as uid 0.
			lookup:   func() (*Identity, error) { return LookupName("0") },
			wantText: `"0"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			id, err := tc.lookup()
			if !errors.Is(err, ErrUnknownUser) {
				t.Fatalf("lookup = %+v, %v; want ErrUnknownUser", id, err)
			}
			if !strings.Contains(err.Error(), tc.wantText) {
				t.Errorf("error %q does not name %s", err, tc.wantText)
			}
		})
	}
}

// fakeGetent installs a getent that knows two directory users, as an LDAP
// or SSSD setup would, and nothing else.
func fakeGetent(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	script := `#!/bin/sh
[ "$2" = "--" ] || { echo "usage" >&2; exit 1; }
case "$1 $3" in
"passwd 5001"|"passwd ns-ada") echo "ns-ada:*:5001:5001:Ada L:/home/ns-ada:/bin/zsh" ;;
"passwd 5002"|"passwd ns-bob") echo "ns-bob:*:5002:6000:Bob:/home/ns-bob:" ;;
"initgroups ns-ada") echo "ns-ada               7001 5001 7002" ;;
"initgroups ns-bob") echo "ns-bob               " ;;
"passwd broken") echo "broken:x" ;;
"initgroups "*) echo "$3                  " ;;
*) exit 2 ;;
esac
`
	path := filepath.Join(dir, "getent")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	old := getentCommand
	getentCommand = path
	t.Cleanup(func() { getentCommand = old })
}

func TestLookupThroughNameService(t *testing.T) {
	// The users live only in the fake name service: a machine that has
	// any of them locally would answer first.
	for _, who := range []string{"5001", "5002", "5003", "ns-ada", "ns-bob", "broken"} {
		if _, err := exec.Command("id", who).Output(); err == nil {
			t.Skipf("user %s exists on this machine", who)
		}
	}
	fakeGetent(t)
	tests := map[string]struct {
		lookup  func() (*Identity, error)
		want    *Identity
		wantErr error
	}{
		"by uid": {
			lookup: func() (*Identity, error) { return Lookup(5001) },
			want:   &Identity{Name: "ns-ada", UID: 5001, GID: 5001, Groups: []uint32{5001, 7001, 7002}, Home: "/home/ns-ada", Shell: "/bin/zsh"},
		},
		"by name, empty shell": {
			lookup: func() (*Identity, error) { return LookupName("ns-bob") },
			want:   &Identity{Name: "ns-bob", UID: 5002, GID: 6000, Groups: []uint32{6000}, Home: "/home/ns-bob", Shell: DefaultShell},
		},
		"unknown": {
			lookup:  func() (*Identity, error) { return Lookup(5003) },
			wantErr: ErrUnknownUser,
		},
		"malformed answer": {
			lookup:  func() (*Identity, error) { return LookupName("broken") },
			wantErr: errPasswdLine,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := tc.lookup()
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("identity (-want +got):\n%s", diff)
			}
		})
	}
}

func TestShellFromPasswd(t *testing.T) {
	localEntry(t, "root")
	tests := map[string]struct {
		passwd string // contents of the passwd file; "" means no file
		getent bool
		want   string
	}{
		"listed shell":        {passwd: "# local\n\nroot:x:0:0:root:/root:/bin/tcsh\n", want: "/bin/tcsh"},
		"empty shell field":   {passwd: "root:x:0:0:root:/root:\n", want: DefaultShell},
		"other uid same name": {passwd: "root:x:1:0:root:/root:/bin/ksh\n", want: DefaultShell},
		"junk lines skipped":  {passwd: "+::::::\nbad\nroot:x:0:0:root:/root:/bin/ksh\n", want: "/bin/ksh"},
		"no file, no getent":  {want: DefaultShell},
		"no file, getent":     {getent: true, want: localEntry(t, "root")[6]},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			oldFile, oldGetent := passwdFile, getentCommand
			t.Cleanup(func() { passwdFile, getentCommand = oldFile, oldGetent })
			passwdFile = filepath.Join(t.TempDir(), "passwd")
			if tc.passwd != "" {
				if err := os.WriteFile(passwdFile, []byte(tc.passwd), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if !tc.getent {
				getentCommand = ""
			}
			id, err := Lookup(0)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, id.Shell); diff != "" {
				t.Errorf("Shell (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCredential(t *testing.T) {
	id := &Identity{Name: "u", UID: 1000, GID: 100, Groups: []uint32{100, 27}}
	cred := id.Credential()
	want := &syscall.Credential{Uid: 1000, Gid: 100, Groups: []uint32{100, 27}}
	if diff := cmp.Diff(want, cred); diff != "" {
		t.Errorf("Credential (-want +got):\n%s", diff)
	}
	cred.Groups[0] = 0
	if id.Groups[0] != 100 {
		t.Error("Credential shares its Groups slice with the Identity")
	}
	if (&Identity{UID: 1, GID: 1}).Credential().NoSetGroups {
		t.Error("Credential without groups skips setgroups(2): the daemon's groups would leak")
	}
}

// TestCredentialRunsAsUser starts id(1) with the credential of nobody, with
// its groups and with none, and checks what the process really got: no
// group of the daemon may leak.
func TestCredentialRunsAsUser(t *testing.T) {
	if !CanSwitch() {
		t.Skip("cannot switch users here")
	}
	nobody, err := LookupName("nobody")
	if errors.Is(err, ErrUnknownUser) {
		t.Skip("no nobody account")
	} else if err != nil {
		t.Fatal(err)
	}
	bare := *nobody
	bare.Groups = nil
	tests := map[string]struct {
		id   *Identity
		want string
	}{
		"with groups": {id: nobody, want: formatIDs(nobody.UID, nobody.GID, nobody.Groups)},
		"no groups":   {id: &bare, want: formatIDs(nobody.UID, nobody.GID, []uint32{nobody.GID})},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", "id -u; id -g; id -G")
			cmd.Dir = "/"
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: tc.id.Credential()}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("id as nobody: %v", err)
			}
			if diff := cmp.Diff(tc.want, string(out)); diff != "" {
				t.Errorf("id output (-want +got):\n%s", diff)
			}
		})
	}
}

func formatIDs(uid, gid uint32, groups []uint32) string {
	var g []string
	for _, x := range groups {
		g = append(g, strconv.FormatUint(uint64(x), 10))
	}
	return fmt.Sprintf("%d\n%d\n%s\n", uid, gid, strings.Join(g, " "))
}

func TestCanSwitch(t *testing.T) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	var capEff uint64
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			capEff, err = strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	const setgid, setuid = 6, 7
	want := capEff&(1<<setgid) != 0 && capEff&(1<<setuid) != 0
	if diff := cmp.Diff(want, CanSwitch()); diff != "" {
		t.Errorf("CanSwitch with CapEff %x (-want +got):\n%s", capEff, diff)
	}
}

func TestParseID(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    uint32
		wantErr bool
	}{
		"zero":      {in: "0", want: 0},
		"max":       {in: "4294967294", want: 4294967294},
		"minus one": {in: "4294967295", wantErr: true},
		"too big":   {in: "4294967296", wantErr: true},
		"negative":  {in: "-1", wantErr: true},
		"plus":      {in: "+1", wantErr: true},
		"empty":     {in: "", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseID(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseID(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseID(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}
