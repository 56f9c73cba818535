package restapi

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/bridge/droverv1"
	"github.com/droverhq/drover/internal/authctx"
	"github.com/droverhq/drover/internal/droverapi"
	"github.com/droverhq/drover/internal/jwtauth"
	"github.com/droverhq/drover/internal/slurmerr"
)

// TokenPath and TokenReply are the token endpoint's (package droverapi).
const TokenPath = droverapi.TokenPath

// TokenReply is the token endpoint's answer.
type TokenReply = droverapi.TokenReply

// handleToken issues a token with slurmctld's rules: auth/jwt must be on;
// a user gets one for themselves only, root and SlurmUser for anyone;
// disable_token_creation leaves tokens to root and SlurmUser; a user's
// lifespan is bounded by max_token_lifespan.
func (f *front) handleToken(w http.ResponseWriter, r *http.Request) {
	f.ctl.StatsRef().CountRPCCtx(r.Context(), "REQUEST_AUTH_TOKEN")
	caller, _ := authctx.From(r.Context())
	j := f.opts.JWT
	if j == nil {
		droverv1.ReplyError(w, slurmerr.New(slurmerr.PluginNotLoaded, "auth/jwt is not configured"), "_auth_token")
		return
	}
	slurmUser := f.ctl.IsSlurmUser(caller.Identity.UID)
	if j.Config.NoCreation && !slurmUser {
		droverv1.ReplyError(w, slurmerr.New(slurmerr.AccessDenied, "token creation is disabled"), "_auth_token")
		return
	}
	q := r.URL.Query()
	user := caller.User
	if u := q.Get("username"); u != "" {
		if u != caller.User && !slurmUser {
			droverv1.ReplyError(w, slurmerr.New(slurmerr.UserIDMissing, "attempt to retrieve a token for a different user=%s", u), "_auth_token")
			return
		}
		user = u
	}
	lifespan := jwtauth.DefaultLifespan
	if j.Config.MaxLifespan > 0 {
		lifespan = min(lifespan, j.Config.MaxLifespan)
	}
	if v := q.Get("lifespan"); v != "" {
		switch strings.ToLower(v) {
		case "infinite", "unlimited":
			lifespan = time.Duration(math.MaxInt32-1) * time.Second
		default:
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				droverv1.ReplyError(w, slurmerr.New(slurmerr.InvalidTimeLimit, "invalid lifespan %q", v), "_auth_token")
				return
			}
			lifespan = time.Duration(n) * time.Second
		}
		if j.Config.MaxLifespan > 0 && lifespan > j.Config.MaxLifespan && !slurmUser {
			droverv1.ReplyError(w, slurmerr.New(slurmerr.InvalidTimeLimit, "lifespan %v exceeds max_token_lifespan %v", lifespan, j.Config.MaxLifespan), "_auth_token")
			return
		}
	}
	tok, err := jwtauth.Issue(j.Key, user, lifespan, j.now())
	if err != nil {
		droverv1.ReplyError(w, slurmerr.New(slurmerr.TokenGenerationFailed, "%v", err), "_auth_token")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(TokenReply{Token: tok})
}
