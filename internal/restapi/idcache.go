package restapi

import (
	"sync"
	"time"

	"github.com/droverhq/drover/internal/authctx"
	"github.com/droverhq/drover/internal/usercred"
)

// idTTL is how long a user or group lookup is reused. Reading the account
// databases (with every group for a user's memberships) for each request
// was most of a small request's cost; slurmctld and sssd cache such
// lookups alike. A renamed or removed account is seen within idTTL.
const idTTL = 30 * time.Second

type idEntry struct {
	caller authctx.Caller
	id     *usercred.Identity
	err    error
	at     time.Time
}

var (
	idMu     sync.Mutex
	byUIDGID = map[[2]uint32]idEntry{}
	byName   = map[string]idEntry{}
)

// cachedIdentity is identityFor without the source, reused for idTTL.
func cachedIdentity(uid, gid uint32, source string) (authctx.Caller, error) {
	key := [2]uint32{uid, gid}
	idMu.Lock()
	e, ok := byUIDGID[key]
	idMu.Unlock()
	if !ok || time.Since(e.at) > idTTL {
		c, err := identityFor(uid, gid, "")
		e = idEntry{caller: c, err: err, at: time.Now()}
		idMu.Lock()
		if len(byUIDGID) > 4096 {
			clear(byUIDGID)
		}
		byUIDGID[key] = e
		idMu.Unlock()
	}
	c := e.caller
	c.Source = source
	return c, e.err
}

// cachedLookupName is usercred.LookupName, reused for idTTL; unknown
// names are not kept, so that a new account works at once.
func cachedLookupName(name string) (*usercred.Identity, error) {
	idMu.Lock()
	e, ok := byName[name]
	idMu.Unlock()
	if ok && time.Since(e.at) <= idTTL {
		return e.id, nil
	}
	id, err := usercred.LookupName(name)
	if err != nil {
		return nil, err
	}
	idMu.Lock()
	if len(byName) > 4096 {
		clear(byName)
	}
	byName[name] = idEntry{id: id, at: time.Now()}
	idMu.Unlock()
	return id, nil
}
