package controller

import (
	"time"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/msgauth"
)

// NewAuth returns the checker of what is sent to the controller with the
// cluster key: the node daemons' messages and the user credentials of the
// hosts' credential services. Tokens issued before now are refused, since
// the replay cache starts empty.
func NewAuth(keys *clusterkey.Holder, ttl time.Duration) *msgauth.Verifier {
	return &msgauth.Verifier{Keys: keys, Audience: msgauth.Controller, MaxTTL: ttl, Since: time.Now(), Replay: msgauth.NewReplay()}
}

// Auth is the controller's checker of signed requests.
func (c *Controller) Auth() *msgauth.Verifier { return c.cfg.Auth }
