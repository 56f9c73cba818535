package scontrol

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/droverapi"
)

// token is `scontrol token [lifespan=S|infinite] [username=U]`: it asks
// the controller for an auth/jwt token and prints SLURM_JWT=<token>.
func (c *cmd) token(ctx context.Context, args []string) {
	q := url.Values{}
	for _, a := range args {
		switch {
		case hasPrefixFold(a, "lifespan="):
			v := a[len("lifespan="):]
			if strings.EqualFold(v, "infinite") || strings.EqualFold(v, "unlimited") {
				q.Set("lifespan", "infinite")
				continue
			}
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				c.exitCode = 1
				fmt.Fprintf(c.env.Stderr, "Invalid lifespan value: %s\n", v)
				return
			}
			q.Set("lifespan", strconv.Itoa(n))
		case hasPrefixFold(a, "username="):
			q.Set("username", a[len("username="):])
		default:
			c.exitCode = 1
			fmt.Fprintf(c.env.Stderr, "Invalid option: `%s`\n", a)
			return
		}
	}
	path := droverapi.TokenPath
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var reply droverapi.TokenReply
	if err := c.env.Call(ctx, "POST", path, nil, &reply); err != nil {
		c.exitCode = 1
		fmt.Fprintf(c.env.Stderr, "scontrol: error: slurm_fetch_token: error with request: %v\n", err)
		return
	}
	fmt.Fprintf(c.env.Stdout, "SLURM_JWT=%s\n", reply.Token)
}
