package controller

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
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

// authNode lets through only node messages signed with the cluster key
// by a node daemon; who it speaks for is checked by each handler
// (speaksFor), once it has read the node's name.
func (c *Controller) authNode(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		claims, err := c.cfg.Auth.VerifyRequest(r, nodeproto.MaxBody)
		if err == nil && (claims.Kind != msgauth.KindDaemon || !strings.HasPrefix(claims.Issuer(), msgauth.Node(""))) {
			err = fmt.Errorf("%w: %s token from %s is not a node daemon's", msgauth.ErrInvalid, claims.Kind, claims.Issuer())
		}
		if err != nil {
			c.logger.Warn("node message refused", "path", r.URL.Path, "source", r.RemoteAddr, "err", err)
			nodeproto.Fail(w, http.StatusUnauthorized, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(msgauth.WithClaims(r.Context(), claims)))
	})
}

// speaksFor refuses a message about node name signed by another node: a
// node daemon may only speak for itself. It answers the refusal.
func (c *Controller) speaksFor(w http.ResponseWriter, r *http.Request, name string) bool {
	claims := msgauth.ClaimsFrom(r.Context())
	if claims != nil && claims.Issuer() == msgauth.Node(name) {
		return true
	}
	from := "nobody"
	if claims != nil {
		from = claims.Issuer()
	}
	err := fmt.Errorf("%w: a message for node %q signed by %s", msgauth.ErrInvalid, name, from)
	c.logger.Warn("node message refused", "path", r.URL.Path, "source", r.RemoteAddr, "err", err)
	nodeproto.Fail(w, http.StatusForbidden, err)
	return false
}
