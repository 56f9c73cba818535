//go:build linux

package usercred

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParsePasswdLine(t *testing.T) {
	tests := map[string]struct {
		line    string
		want    passwdEntry
		wantErr bool
	}{
		"full": {
			line: "ada:x:5001:100:Ada Lovelace,,,:/home/ada:/bin/bash",
			want: passwdEntry{Name: "ada", Password: "x", UID: 5001, GID: 100, Gecos: "Ada Lovelace,,,", Home: "/home/ada", Shell: "/bin/bash"},
		},
		"empty fields": {
			line: "svc::10:10:::",
			want: passwdEntry{Name: "svc", UID: 10, GID: 10},
		},
		"six fields":     {line: "ada:x:5001:100:Ada:/home/ada", wantErr: true},
		"eight fields":   {line: "ada:x:5001:100:Ada:/home/ada:/bin/sh:x", wantErr: true},
		"nis include":    {line: "+::::::", wantErr: true},
		"nis exclude":    {line: "-bob::::::", wantErr: true},
		"empty name":     {line: ":x:1:1:::", wantErr: true},
		"bad uid":        {line: "ada:x:abc:100:::", wantErr: true},
		"negative gid":   {line: "ada:x:1:-1:::", wantErr: true},
		"reserved uid":   {line: "ada:x:4294967295:1:::", wantErr: true},
		"uid overflow":   {line: "ada:x:4294967296:1:::", wantErr: true},
		"empty uid":      {line: "ada:x::1:::", wantErr: true},
		"nothing at all": {line: "", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parsePasswdLine(tc.line)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parsePasswdLine(%q) error = %v, want error %v", tc.line, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parsePasswdLine(%q) (-want +got):\n%s", tc.line, diff)
			}
		})
	}
}

func TestScanPasswd(t *testing.T) {
	db := "# comment\n\n  \nbad line\n+::::::\nada:x:5001:100::/home/ada:/bin/zsh\r\nada:x:5009:100::/home/ada2:/bin/sh\n"
	got, found, err := scanPasswd(strings.NewReader(db), func(e passwdEntry) bool { return e.Name == "ada" })
	if err != nil || !found {
		t.Fatalf("scanPasswd = %v, %v", found, err)
	}
	want := passwdEntry{Name: "ada", Password: "x", UID: 5001, GID: 100, Home: "/home/ada", Shell: "/bin/zsh"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("first match (-want +got):\n%s", diff)
	}
	if _, found, _ := scanPasswd(strings.NewReader(db), func(e passwdEntry) bool { return e.UID == 1 }); found {
		t.Error("found an entry that is not there")
	}
}

// FuzzParsePasswdLine checks that parsing never panics, that an accepted
// line formats back to itself (ids aside, which may have leading zeros),
// and that entries built from arbitrary field values round-trip.
func FuzzParsePasswdLine(f *testing.F) {
	f.Add("ada:x:5001:100:Ada Lovelace,,,:/home/ada:/bin/bash", "ada", "/bin/sh", uint32(1), uint32(2))
	f.Add("svc::10:10:::", "svc", "", uint32(0), uint32(0))
	f.Add("+::::::", "+x", ":", uint32(4294967295), uint32(7))
	f.Add("a:b:007:08:c:d:e", "a\nb", "sh", uint32(7), uint32(8))
	f.Fuzz(func(t *testing.T, line, name, shell string, uid, gid uint32) {
		if e, err := parsePasswdLine(line); err == nil {
			again, err := parsePasswdLine(e.String())
			if err != nil {
				t.Fatalf("reparse of %q: %v", e.String(), err)
			}
			if diff := cmp.Diff(e, again); diff != "" {
				t.Fatalf("round trip of %q (-first +second):\n%s", line, diff)
			}
			if e.Name == "" || strings.Contains(e.Name+e.Shell+e.Home, ":") {
				t.Fatalf("parsePasswdLine(%q) accepted %+v", line, e)
			}
		}
		e := passwdEntry{Name: name, Password: "x", UID: uid, GID: gid, Home: "/home", Shell: shell}
		got, err := parsePasswdLine(e.String())
		valid := name != "" && name[0] != '+' && name[0] != '-' && !strings.Contains(name+shell, ":") &&
			uid != 1<<32-1 && gid != 1<<32-1
		if (err == nil) != valid {
			t.Fatalf("parsePasswdLine(%q) error = %v, want valid %v", e.String(), err, valid)
		}
		if valid {
			if diff := cmp.Diff(e, got); diff != "" {
				t.Fatalf("round trip (-want +got):\n%s", diff)
			}
		}
	})
}

func TestParseInitgroups(t *testing.T) {
	tests := map[string]struct {
		name, out string
		want      []string
		wantErr   bool
	}{
		"groups":       {name: "ada", out: "ada                  7001 5001 7002\n", want: []string{"7001", "5001", "7002"}},
		"none":         {name: "root", out: "root                 \n", want: []string{}},
		"other name":   {name: "ada", out: "bob 1\n", wantErr: true},
		"empty":        {name: "ada", out: "", wantErr: true},
		"bad group id": {name: "ada", out: "ada 1 x\n", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseInitgroups(tc.name, []byte(tc.out))
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseInitgroups error = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseInitgroups (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzParseInitgroups checks that parsing never panics and that accepted
// output, written back in getent's layout, parses to the same ids.
func FuzzParseInitgroups(f *testing.F) {
	f.Add("ada", []byte("ada                  7001 5001 7002\n"))
	f.Add("root", []byte("root                 \n"))
	f.Add("a b", []byte("a b 1"))
	f.Fuzz(func(t *testing.T, name string, out []byte) {
		gids, err := parseInitgroups(name, out)
		if err != nil {
			return
		}
		for _, g := range gids {
			if _, err := parseID(g); err != nil {
				t.Fatalf("accepted group id %q: %v", g, err)
			}
		}
		again, err := parseInitgroups(name, []byte(name+"    "+strings.Join(gids, " ")+"\n"))
		if err != nil {
			t.Fatalf("reparse: %v", err)
		}
		if diff := cmp.Diff(gids, again); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}
