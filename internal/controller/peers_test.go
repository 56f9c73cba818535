package controller_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/droverapi"
	"github.com/droverhq/drover/internal/slurmerr"
)

// peers stands for the daemon's replication: three controllers, and
// the takeovers asked of it.
type peers struct {
	asked []int
	err   error
}

func (p *peers) Names() []string { return []string{"ctl0", "ctl1", "ctl2"} }

func (p *peers) Controllers(context.Context) []controller.ControllerStatus {
	var out []controller.ControllerStatus
	for i, n := range p.Names() {
		out = append(out, controller.ControllerStatus{Name: n, Index: i, Responding: true, Leader: i == 0, Self: i == 0})
	}
	return out
}

func (p *peers) TakeOver(_ context.Context, index int) error {
	p.asked = append(p.asked, index)
	return p.err
}

// TestControllersAlone: a controller alone lists itself, up and
// leading, and refuses a takeover for want of a backup (after checking
// the caller, as slurmctld does first).
func TestControllersAlone(t *testing.T) {
	c := ctltest.New(t, func(cfg *controller.Config) { cfg.Operators = []string{"bob"} })
	list, replicated := c.Ctl.Controllers(ctx)
	if replicated || len(list) != 1 || list[0].Name != "ctl0" || !list[0].Responding || !list[0].Leader || !list[0].Self || list[0].Index != 0 {
		t.Errorf("Controllers() = %+v, %v; want ctl0 alone, up and leading", list, replicated)
	}
	for name, tc := range map[string]struct {
		who    controller.Identity
		target string
		code   slurmerr.Code
		detail string
	}{
		"default":      {who: ctltest.Root, code: slurmerr.NotSupported, detail: "no backup controller defined"},
		"by name":      {who: ctltest.Root, target: "ctl0", code: slurmerr.NotSupported, detail: "no backup controller defined"},
		"unprivileged": {who: ctltest.Alice, code: slurmerr.UserIDMissing, detail: "Invalid user id"},
		"operator":     {who: ctltest.Bob, code: slurmerr.UserIDMissing, detail: "Invalid user id"},
	} {
		t.Run(name, func(t *testing.T) {
			target, err := droverapi.ParseTakeoverTarget(tc.target)
			if err != nil {
				t.Fatal(err)
			}
			err = c.Ctl.TakeOver(ctx, tc.who, target)
			var se *slurmerr.Error
			if !errors.As(err, &se) || se.Code != tc.code || se.Detail != tc.detail {
				t.Errorf("TakeOver: %v, want code %d, detail %q", err, tc.code, tc.detail)
			}
		})
	}
}

// TestTakeOver: a takeover reaches the replication with the index of
// the controller named or numbered; a target not among SlurmctldHost,
// an unprivileged caller and a failed handover are refused.
func TestTakeOver(t *testing.T) {
	p := &peers{}
	c := ctltest.New(t, func(cfg *controller.Config) { cfg.Peers = p })
	if list, replicated := c.Ctl.Controllers(ctx); !replicated || len(list) != 3 {
		t.Errorf("Controllers() = %+v, %v; want the replication's three", list, replicated)
	}
	take := func(who controller.Identity, arg string) error {
		target, err := droverapi.ParseTakeoverTarget(arg)
		if err != nil {
			t.Fatal(err)
		}
		return c.Ctl.TakeOver(ctx, who, target)
	}
	for _, arg := range []string{"", "2", "ctl2", "CTL1", "ctl0"} {
		if err := take(ctltest.Root, arg); err != nil {
			t.Errorf("takeover %q: %v", arg, err)
		}
	}
	if diff := cmp.Diff([]int{1, 2, 2, 1, 0}, p.asked); diff != "" {
		t.Errorf("indices asked (-want +got):\n%s", diff)
	}
	p.asked = nil
	if err := take(ctltest.Root, "3"); !strings.HasPrefix(err.Error(), "invalid backup controller index (3)") {
		t.Errorf("takeover 3 of 3: %v", err)
	}
	if err := take(ctltest.Root, "ctl9"); !strings.HasPrefix(err.Error(), "no controller named ctl9") {
		t.Errorf("takeover ctl9: %v", err)
	}
	if err := take(ctltest.Alice, "ctl1"); slurmerr.CodeOf(err) != slurmerr.UserIDMissing {
		t.Errorf("takeover by alice: %v", err)
	}
	if len(p.asked) != 0 {
		t.Errorf("refused takeovers reached the replication: %v", p.asked)
	}
	p.err = errors.New("leadership transfer timeout")
	if err := take(ctltest.Root, "ctl1"); slurmerr.CodeOf(err) != slurmerr.ControllerConnect || !strings.Contains(err.Error(), "leadership transfer timeout") {
		t.Errorf("failed handover: %v", err)
	}
}
