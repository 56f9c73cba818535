package usercred

import (
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// PeerCred returns the credentials the kernel recorded for the process at
// the other end of a unix socket (SO_PEERCRED): who connected, whatever
// the connection says.
func PeerCred(c *net.UnixConn) (*syscall.Ucred, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *syscall.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	return cred, credErr
}

// NameCache gives uids' user names, each looked up at most once a minute:
// where the name only labels a uid the kernel vouched for, a request need
// not read the account databases. The zero value is ready; it is safe for
// concurrent use.
type NameCache struct{ m sync.Map } // uid -> cachedName

type cachedName struct {
	name  string
	until time.Time
}

// Name returns uid's user name, or the uid in decimal for an unknown one.
func (c *NameCache) Name(uid uint32) string {
	now := time.Now()
	if v, ok := c.m.Load(uid); ok && now.Before(v.(cachedName).until) {
		return v.(cachedName).name
	}
	name := strconv.FormatUint(uint64(uid), 10)
	if id, err := Lookup(uid); err == nil {
		name = id.Name
	}
	c.m.Store(uid, cachedName{name: name, until: now.Add(time.Minute)})
	return name
}
