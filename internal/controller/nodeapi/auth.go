package nodeapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
)

// authNode lets through only node messages signed with the cluster key
// by a node daemon; who it speaks for is checked by each handler
// (speaksFor), once it has read the node's name.
func (s *server) authNode(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		claims, err := s.ctl.Auth().VerifyRequest(r, nodeproto.MaxBody)
		if err == nil && (claims.Kind != msgauth.KindDaemon || !strings.HasPrefix(claims.Issuer(), msgauth.Node(""))) {
			err = fmt.Errorf("%w: %s token from %s is not a node daemon's", msgauth.ErrInvalid, claims.Kind, claims.Issuer())
		}
		if err != nil {
			s.ctl.Logger().Warn("node message refused", "path", r.URL.Path, "source", r.RemoteAddr, "err", err)
			nodeproto.Fail(w, http.StatusUnauthorized, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(msgauth.WithClaims(r.Context(), claims)))
	})
}

// authDaemon lets through only requests signed with the cluster key by
// a daemon: a node daemon (slurmd:NODE) or a login host's credential
// service (sack:HOST). A user's credential, which the same services
// sign for any local user, is refused: configuration is for the hosts.
func (s *server) authDaemon(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		claims, err := s.ctl.Auth().VerifyRequest(r, nodeproto.MaxBody)
		if err == nil && (claims.Kind != msgauth.KindDaemon ||
			!strings.HasPrefix(claims.Issuer(), msgauth.Node("")) && !strings.HasPrefix(claims.Issuer(), msgauth.Host(""))) {
			err = fmt.Errorf("%w: %s token from %s is not a node daemon's or a login host's", msgauth.ErrInvalid, claims.Kind, claims.Issuer())
		}
		if err != nil {
			s.ctl.Logger().Warn("node message refused", "path", r.URL.Path, "source", r.RemoteAddr, "err", err)
			nodeproto.Fail(w, http.StatusUnauthorized, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(msgauth.WithClaims(r.Context(), claims)))
	})
}

// speaksFor refuses a message about node name signed by another node: a
// node daemon may only speak for itself. It answers the refusal.
func (s *server) speaksFor(w http.ResponseWriter, r *http.Request, name string) bool {
	claims := msgauth.ClaimsFrom(r.Context())
	if claims != nil && claims.Issuer() == msgauth.Node(name) {
		return true
	}
	from := "nobody"
	if claims != nil {
		from = claims.Issuer()
	}
	err := fmt.Errorf("%w: a message for node %q signed by %s", msgauth.ErrInvalid, name, from)
	s.ctl.Logger().Warn("node message refused", "path", r.URL.Path, "source", r.RemoteAddr, "err", err)
	nodeproto.Fail(w, http.StatusForbidden, err)
	return false
}
