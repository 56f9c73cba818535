//go:build linux

// Package usercred looks up the Unix identity a job runs as and turns it
// into the credential the node daemon starts the job with, as slurmstepd
// does with getpwuid_r(3) and initgroups(3) before it drops privileges.
//
// The lookup is pure Go (Drover builds without cgo): os/user reads
// /etc/passwd and /etc/group, and the login shell, which os/user does not
// expose, comes from /etc/passwd directly. Users that only a name service
// knows (LDAP, SSSD, NIS: the usual case on a cluster) are then resolved
// with getent(1), which goes through the same NSS configuration that
// getpwuid_r would.
package usercred

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// DefaultShell is the login shell of an account whose passwd entry leaves
// the field empty, as passwd(5) specifies.
const DefaultShell = "/bin/sh"

// ErrUnknownUser is wrapped by the errors of Lookup and LookupName when no
// account has the uid or name asked for.
var ErrUnknownUser = errors.New("unknown user")

// Identity is the account a job runs as.
type Identity struct {
	// Name is the login name.
	Name string
	// UID and GID are the user id and the primary group id.
	UID, GID uint32
	// Groups are the group ids the job gets with setgroups(2): the
	// primary group first, then the groups that list the user as a
	// member, without repeats, as initgroups(3) computes them.
	Groups []uint32
	// Home is the home directory, where jobs without --chdir start.
	Home string
	// Shell is the login shell, DefaultShell when the entry has none.
	Shell string
}

// Lookup returns the identity of uid. An unknown uid gives an error that
// names it and wraps ErrUnknownUser.
func Lookup(uid uint32) (*Identity, error) {
	id := strconv.FormatUint(uint64(uid), 10)
	u, err := user.LookupId(id)
	if err != nil {
		var unknown user.UnknownUserIdError
		if !errors.As(err, &unknown) {
			return nil, fmt.Errorf("usercred: look up uid %d: %w", uid, err)
		}
		return lookupNSS(id, fmt.Sprintf("uid %d", uid), func(e passwdEntry) bool { return e.UID == uid })
	}
	return fromUser(u)
}

// LookupName returns the identity of the account called name. An unknown
// name gives an error that names it and wraps ErrUnknownUser.
func LookupName(name string) (*Identity, error) {
	if name == "" {
		return nil, fmt.Errorf("usercred: look up user: empty name: %w", ErrUnknownUser)
	}
	u, err := user.Lookup(name)
	if err != nil {
		var unknown user.UnknownUserError
		if !errors.As(err, &unknown) {
			return nil, fmt.Errorf("usercred: look up user %q: %w", name, err)
		}
		return lookupNSS(name, fmt.Sprintf("user %q", name), func(e passwdEntry) bool { return e.Name == name })
	}
	return fromUser(u)
}

// fromUser completes what os/user found with the groups and the shell.
func fromUser(u *user.User) (*Identity, error) {
	uid, err := parseID(u.Uid)
	if err != nil {
		return nil, fmt.Errorf("usercred: user %q: uid: %w", u.Username, err)
	}
	gid, err := parseID(u.Gid)
	if err != nil {
		return nil, fmt.Errorf("usercred: user %q: gid: %w", u.Username, err)
	}
	id := &Identity{Name: u.Username, UID: uid, GID: gid, Home: u.HomeDir, Shell: DefaultShell}
	gids, err := u.GroupIds()
	if err != nil {
		return nil, fmt.Errorf("usercred: groups of user %q: %w", u.Username, err)
	}
	if id.Groups, err = groupList(gid, gids); err != nil {
		return nil, fmt.Errorf("usercred: groups of user %q: %w", u.Username, err)
	}
	e, found, err := findPasswd(passwdFile, func(e passwdEntry) bool { return e.Name == id.Name && e.UID == id.UID })
	if err != nil {
		return nil, fmt.Errorf("usercred: user %q: %w", id.Name, err)
	}
	if !found {
		// os/user found the account elsewhere (through NSS, in a cgo
		// build): ask the name service for the whole entry.
		e, found, err = getentPasswd(id.Name)
		if err != nil {
			return nil, fmt.Errorf("usercred: user %q: %w", id.Name, err)
		}
	}
	if found && e.Shell != "" {
		id.Shell = e.Shell
	}
	return id, nil
}

// lookupNSS resolves an account that os/user does not know through getent,
// key being a uid or a name; what names it for errors, and match checks
// that the answer is the account asked for (getent reads an all-digit name
// as a uid).
func lookupNSS(key, what string, match func(passwdEntry) bool) (*Identity, error) {
	e, found, err := getentPasswd(key)
	if err != nil {
		return nil, fmt.Errorf("usercred: look up %s: %w", what, err)
	}
	if !found || !match(e) {
		return nil, fmt.Errorf("usercred: %s: %w", what, ErrUnknownUser)
	}
	id := &Identity{Name: e.Name, UID: e.UID, GID: e.GID, Home: e.Home, Shell: e.Shell}
	if id.Shell == "" {
		id.Shell = DefaultShell
	}
	// Group memberships of such a user live in the name service too;
	// /etc/group may add local ones.
	gids, err := getentInitgroups(e.Name)
	if err != nil {
		return nil, fmt.Errorf("usercred: groups of user %q: %w", e.Name, err)
	}
	local, err := (&user.User{Username: e.Name, Gid: strconv.FormatUint(uint64(e.GID), 10)}).GroupIds()
	if err != nil {
		return nil, fmt.Errorf("usercred: groups of user %q: %w", e.Name, err)
	}
	if id.Groups, err = groupList(e.GID, append(local, gids...)); err != nil {
		return nil, fmt.Errorf("usercred: groups of user %q: %w", e.Name, err)
	}
	return id, nil
}

// groupList returns the primary group followed by the others, in order,
// without repeats.
func groupList(primary uint32, gids []string) ([]uint32, error) {
	groups := []uint32{primary}
	for _, s := range gids {
		g, err := parseID(s)
		if err != nil {
			return nil, fmt.Errorf("gid: %w", err)
		}
		if !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	return groups, nil
}

// parseID parses a decimal uid or gid; (uint32)-1 is rejected because the
// kernel reads it as "unchanged" in setresuid(2) and friends.
func parseID(s string) (uint32, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("invalid id %q", s)
	}
	if n == 1<<32-1 {
		return 0, fmt.Errorf("invalid id %q: reserved", s)
	}
	return uint32(n), nil
}

// Credential returns the credential for exec.Cmd.SysProcAttr that runs a
// process as this identity with its groups. The groups are always set, even
// when empty, so that the daemon's own (root's) supplementary groups never
// leak into a job.
func (id *Identity) Credential() *syscall.Credential {
	return &syscall.Credential{
		Uid:         id.UID,
		Gid:         id.GID,
		Groups:      slices.Clone(id.Groups),
		NoSetGroups: false,
	}
}

// CanSwitch reports whether this process may start processes as another
// user: it needs CAP_SETUID and CAP_SETGID (for setgroups too), which root
// has unless a container or a bounding set took them away. slurmd likewise
// must run as root to launch jobs of other users.
func CanSwitch() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return os.Geteuid() == 0
	}
	const need = 1<<unix.CAP_SETUID | 1<<unix.CAP_SETGID
	return data[0].Effective&need == need
}

// CheckGID refuses a gid the user is not in (its primary group or one of
// its groups), as slurmd refuses a launch whose credential's gid the
// user does not have here.
func (id *Identity) CheckGID(gid uint32) error {
	if gid == id.GID || slices.Contains(id.Groups, gid) {
		return nil
	}
	return fmt.Errorf("usercred: user %s (uid %d) is not a member of gid %d on this node", id.Name, id.UID, gid)
}
