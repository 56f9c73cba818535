package scontrol

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/clitest"
	"github.com/droverhq/drover/internal/cli/connect"
	"github.com/droverhq/drover/internal/droverapi"
)

// controllersCall answers droverapi.ControllersPath with list, through
// JSON as the controller sends it, and records the other calls.
func controllersCall(list *droverapi.Controllers, calls *[]string, err error) func(context.Context, string, string, any, any) error {
	return func(_ context.Context, method, path string, _, out any) error {
		*calls = append(*calls, method+" "+path)
		if path != droverapi.ControllersPath || list == nil {
			return err
		}
		data, _ := json.Marshal(list)
		return json.Unmarshal(data, out)
	}
}

func threeControllers(up [3]bool, leader int) *droverapi.Controllers {
	out := &droverapi.Controllers{Replicated: true}
	for i, name := range []string{"ctl0", "ctl1", "ctl2"} {
		out.Controllers = append(out.Controllers, droverapi.Controller{Name: name, Addr: name + ":6817", Mode: droverapi.ControllerMode(i, 3),
			Responding: up[i], Leader: i == leader, LatencyMicros: int64(100 * (i + 1))})
	}
	return out
}

func TestPing(t *testing.T) {
	const banner = "*****************************************\n** RESTORE SLURMCTLD DAEMON TO SERVICE **\n*****************************************\n"
	tests := []struct {
		name  string
		list  *droverapi.Controllers
		err   error
		user  *clienv.User
		args  []string
		want  clitest.Run
		calls []string
	}{
		{
			name: "three, the first backup leads", list: threeControllers([3]bool{true, true, true}, 1),
			want: clitest.Run{Stdout: "Slurmctld(primary) at ctl0 is UP\nSlurmctld(backup1) at ctl1 is UP (leader)\nSlurmctld(backup2) at ctl2 is UP\n"},
		},
		{
			name: "one down, root", list: threeControllers([3]bool{false, true, true}, 2),
			want: clitest.Run{Stdout: "Slurmctld(primary) at ctl0 is DOWN\nSlurmctld(backup1) at ctl1 is UP\nSlurmctld(backup2) at ctl2 is UP (leader)\n" + banner},
		},
		{
			name: "one down, a user", list: threeControllers([3]bool{false, true, true}, -1), user: &clienv.User{Name: "alice", UID: 1000, GID: 1000},
			want: clitest.Run{Stdout: "Slurmctld(primary) at ctl0 is DOWN\nSlurmctld(backup1) at ctl1 is UP\nSlurmctld(backup2) at ctl2 is UP\n"},
		},
		{
			name: "none answers", list: threeControllers([3]bool{false, false, false}, -1),
			want: clitest.Run{Code: 1, Stdout: "Slurmctld(primary) at ctl0 is DOWN\nSlurmctld(backup1) at ctl1 is DOWN\nSlurmctld(backup2) at ctl2 is DOWN\n" + banner},
		},
		{
			name: "two", list: &droverapi.Controllers{Replicated: true, Controllers: []droverapi.Controller{
				{Name: "ctl0", Mode: "primary", Responding: true, Leader: true}, {Name: "ctl1", Mode: "backup", Responding: true}}},
			want: clitest.Run{Stdout: "Slurmctld(primary) at ctl0 is UP (leader)\nSlurmctld(backup) at ctl1 is UP\n"},
		},
		{
			// A single controller is never marked: Slurm's line.
			name: "single", list: &droverapi.Controllers{Controllers: []droverapi.Controller{{Name: "ctl0", Mode: "primary", Responding: true, Leader: true}}},
			want: clitest.Run{Stdout: "Slurmctld(primary) at ctl0 is UP\n"},
		},
		{
			// A controller without the list: slurmrestd's ping.
			name: "fallback", err: &connect.HTTPError{Status: 404, Body: "Unable to find requested URL endpoint."},
			want:  clitest.Run{Stdout: "Slurmctld(primary) at ctl0 is UP\n"},
			calls: []string{"GET " + droverapi.ControllersPath},
		},
		{
			name: "json", list: threeControllers([3]bool{true, false, true}, 0), args: []string{"--json", "ping"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := harness(t, newFake(t), captureTime)
			var calls []string
			h.Env.Call = controllersCall(tc.list, &calls, tc.err)
			if tc.user != nil {
				h.Env.User = *tc.user
			}
			args := tc.args
			if args == nil {
				args = []string{"ping"}
			}
			got := h.Run(Run, "scontrol", "", args...)
			if tc.name == "json" {
				var doc struct {
					Pings []map[string]any `json:"pings"`
					Meta  map[string]any   `json:"meta"`
				}
				if err := json.Unmarshal([]byte(got.Stdout), &doc); err != nil || got.Code != 0 || doc.Meta == nil {
					t.Fatalf("scontrol --json ping: %v %+v", err, got)
				}
				want := []map[string]any{
					{"hostname": "ctl0", "pinged": "UP", "responding": true, "latency": 100.0, "mode": "primary", "primary": true},
					{"hostname": "ctl1", "pinged": "DOWN", "responding": false, "latency": 200.0, "mode": "backup1", "primary": false},
					{"hostname": "ctl2", "pinged": "UP", "responding": true, "latency": 300.0, "mode": "backup2", "primary": false},
				}
				if diff := cmp.Diff(want, doc.Pings); diff != "" {
					t.Errorf("pings (-want +got):\n%s", diff)
				}
				if !strings.HasPrefix(got.Stdout, "{\n  \"pings\": [") {
					t.Errorf("pings do not come first:\n%s", got.Stdout)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scontrol ping (-want +got):\n%s", diff)
			}
			if tc.calls == nil {
				tc.calls = []string{"GET " + droverapi.ControllersPath}
			}
			if diff := cmp.Diff(tc.calls, calls); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTakeover(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		err   error
		want  clitest.Run
		calls []string
	}{
		{name: "default", args: []string{"takeover"}, calls: []string{"POST /drover/v1/takeover?controller=1"}},
		{name: "index", args: []string{"takeover", "2"}, calls: []string{"POST /drover/v1/takeover?controller=2"}},
		{name: "name", args: []string{"takeover", "ctl2"}, calls: []string{"POST /drover/v1/takeover?controller=ctl2"}},
		{name: "primary by index", args: []string{"takeover", "0"}, want: clitest.Run{Code: 1, Stderr: "takeover: invalid backup controller index (0)\n"}},
		{name: "too many", args: []string{"takeover", "1", "2"}, want: clitest.Run{Code: 1, Stderr: "takeover: too many arguments\n"}},
		{name: "bad name", args: []string{"takeover", "a/b"}, want: clitest.Run{Code: 1, Stderr: "takeover: invalid controller name (\"a/b\")\n"}},
		{
			name: "single controller", args: []string{"takeover"},
			err:   &connect.RequestError{Code: 2036, Message: "Requested operation not supported on this system", Description: "no backup controller defined: Requested operation not supported on this system", Status: 500},
			want:  clitest.Run{Code: 1, Stderr: "slurm_takeover error: no backup controller defined: Requested operation not supported on this system\n"},
			calls: []string{"POST /drover/v1/takeover?controller=1"},
		},
		{
			name: "not privileged", args: []string{"takeover", "ctl1"},
			err:   &connect.RequestError{Code: 2010, Message: "Invalid user id", Description: "Invalid user id: Invalid user id", Status: 500},
			want:  clitest.Run{Code: 1, Stderr: "slurm_takeover error: Invalid user id\n"},
			calls: []string{"POST /drover/v1/takeover?controller=ctl1"},
		},
		{
			name: "unreachable", args: []string{"takeover"}, err: errors.New("dial unix /run/drover.sock: connect: no such file or directory"),
			want:  clitest.Run{Code: 1, Stderr: "slurm_takeover error: Unable to contact slurm controller (connect failure)\n"},
			calls: []string{"POST /drover/v1/takeover?controller=1"},
		},
		{name: "quiet", args: []string{"-Q", "takeover", "0"}, want: clitest.Run{Code: 1, Stderr: "takeover: invalid backup controller index (0)\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := harness(t, newFake(t), captureTime)
			var calls []string
			h.Env.Call = controllersCall(nil, &calls, tc.err)
			got := h.Run(Run, "scontrol", "", tc.args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scontrol %v (-want +got):\n%s", tc.args, diff)
			}
			if diff := cmp.Diff(tc.calls, calls); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}
