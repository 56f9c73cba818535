//go:build linux

package usercred

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// passwdFile is the local account database; tests point it elsewhere.
var passwdFile = "/etc/passwd"

// getentCommand is the getent(1) binary used to reach the name service
// switch; tests replace it with a fake. An empty value, or a binary that is
// not installed, disables the name service fallback.
var getentCommand = "getent"

// passwdEntry is one line of passwd(5).
type passwdEntry struct {
	Name     string
	Password string
	UID, GID uint32
	Gecos    string
	Home     string
	Shell    string
}

// errPasswdLine is wrapped by every parse failure of a passwd line.
var errPasswdLine = errors.New("malformed passwd entry")

// parsePasswdLine parses "name:password:uid:gid:gecos:home:shell". Like
// glibc it requires all seven fields and numeric ids, and rejects the "+"
// and "-" NIS compatibility entries, which are not accounts.
func parsePasswdLine(line string) (passwdEntry, error) {
	f := strings.Split(line, ":")
	if len(f) != 7 {
		return passwdEntry{}, fmt.Errorf("%w: %d fields, want 7", errPasswdLine, len(f))
	}
	if f[0] == "" || f[0][0] == '+' || f[0][0] == '-' {
		return passwdEntry{}, fmt.Errorf("%w: name %q", errPasswdLine, f[0])
	}
	uid, err := parseID(f[2])
	if err != nil {
		return passwdEntry{}, fmt.Errorf("%w: uid: %w", errPasswdLine, err)
	}
	gid, err := parseID(f[3])
	if err != nil {
		return passwdEntry{}, fmt.Errorf("%w: gid: %w", errPasswdLine, err)
	}
	return passwdEntry{Name: f[0], Password: f[1], UID: uid, GID: gid, Gecos: f[4], Home: f[5], Shell: f[6]}, nil
}

// String formats the entry as a passwd(5) line.
func (e passwdEntry) String() string {
	return fmt.Sprintf("%s:%s:%d:%d:%s:%s:%s", e.Name, e.Password, e.UID, e.GID, e.Gecos, e.Home, e.Shell)
}

// scanPasswd returns the first entry of a passwd database that match
// accepts. Blank lines, comments and lines that do not parse are skipped,
// as getpwent(3) skips them.
func scanPasswd(r io.Reader, match func(passwdEntry) bool) (passwdEntry, bool, error) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 4096), 1<<20)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		e, err := parsePasswdLine(line)
		if err != nil {
			continue
		}
		if match(e) {
			return e, true, nil
		}
	}
	if err := s.Err(); err != nil {
		return passwdEntry{}, false, err
	}
	return passwdEntry{}, false, nil
}

// findPasswd scans the passwd file at path; a missing file has no entries.
func findPasswd(path string, match func(passwdEntry) bool) (passwdEntry, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return passwdEntry{}, false, nil
		}
		return passwdEntry{}, false, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	e, found, err := scanPasswd(f, match)
	if err != nil {
		return passwdEntry{}, false, fmt.Errorf("read %s: %w", path, err)
	}
	return e, found, nil
}

// getent runs getent(1) on a database and key. ok is false when the name
// service has no such entry (exit status 2) or getent is not installed.
func getent(database, key string) (out []byte, ok bool, err error) {
	if getentCommand == "" {
		return nil, false, nil
	}
	bin, err := exec.LookPath(getentCommand)
	if err != nil {
		return nil, false, nil
	}
	// "--" keeps a key that starts with "-" from being read as an option.
	cmd := exec.Command(bin, database, "--", key)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 2 {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("getent %s %s: %w: %s", database, key, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, true, nil
}

// getentPasswd looks an account up by name or uid through the name
// service switch.
func getentPasswd(key string) (passwdEntry, bool, error) {
	out, ok, err := getent("passwd", key)
	if err != nil || !ok {
		return passwdEntry{}, false, err
	}
	e, found, err := scanPasswd(bytes.NewReader(out), func(passwdEntry) bool { return true })
	if err != nil {
		return passwdEntry{}, false, fmt.Errorf("getent passwd %s: %w", key, err)
	}
	if !found {
		return passwdEntry{}, false, fmt.Errorf("getent passwd %s: %w: %q", key, errPasswdLine, out)
	}
	return e, true, nil
}

// getentInitgroups returns the supplementary group ids of name that the
// name service knows, from "getent initgroups name", which prints the name
// followed by the ids. Without getent, or for a name it does not know, the
// list is empty.
func getentInitgroups(name string) ([]string, error) {
	out, ok, err := getent("initgroups", name)
	if err != nil || !ok {
		return nil, err
	}
	gids, err := parseInitgroups(name, out)
	if err != nil {
		return nil, fmt.Errorf("getent initgroups %s: %w", name, err)
	}
	return gids, nil
}

// parseInitgroups parses the output of "getent initgroups name": the name,
// then the group ids, separated by blanks.
func parseInitgroups(name string, out []byte) ([]string, error) {
	f := strings.Fields(string(out))
	if len(f) == 0 || f[0] != name {
		return nil, fmt.Errorf("unexpected output %q", out)
	}
	for _, g := range f[1:] {
		if _, err := parseID(g); err != nil {
			return nil, err
		}
	}
	return f[1:], nil
}
