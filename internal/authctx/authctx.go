// Package authctx carries the authenticated caller of a REST request from
// the HTTP layer (which authenticates) to the bridges (which act for it).
package authctx

import (
	"context"

	"github.com/droverhq/drover/internal/controller"
)

type key struct{}

// Caller is an authenticated identity and where the request came from.
type Caller struct {
	controller.Identity
	// Source describes the connection, as slurmrestd's meta.client.source.
	Source string
}

// With returns ctx carrying c.
func With(ctx context.Context, c Caller) context.Context { return context.WithValue(ctx, key{}, c) }

// From returns the caller in ctx, and whether there is one.
func From(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(key{}).(Caller)
	return c, ok
}
