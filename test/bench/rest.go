package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ogen-go/ogen/ogenerrors"

	"github.com/droverhq/drover/internal/sack"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// transport says how a REST client reaches the controller.
type transport string

const (
	// transportUnix is the controller's unix socket: the kernel names the
	// caller (SO_PEERCRED), as slurmrestd's rest_auth/local does.
	transportUnix transport = "unix"
	// transportTCP is loopback TCP, each request with a credential of
	// the host's credential service (a node daemon's), as the commands on
	// a login or compute host send it.
	transportTCP transport = "tcp"
	// transportBareTCP is loopback TCP naming root with no proof, as
	// builds from before authentication took it (drover-baseline).
	transportBareTCP transport = "tcp-bare"
	// transportJWT is TCP with root's auth/jwt token, as a client on
	// another host sends it.
	transportJWT transport = "jwt"
)

// jobEnvironment is the environment every REST submission carries: what a
// small REST client sends (slurmrestd requires one), about 200 bytes.
var jobEnvironment = []string{
	"PATH=/usr/local/bin:/usr/bin:/bin",
	"HOME=/root",
	"USER=root",
	"LOGNAME=root",
	"SHELL=/bin/bash",
	"LANG=C.UTF-8",
	"TERM=xterm",
	"PWD=/tmp",
}

// trivialScript is `sbatch --wrap true`'s script.
const trivialScript = "#!/bin/sh\n# This script was created by sbatch --wrap.\n\ntrue\n"

// dialUnix is an http.Transport's DialContext that reaches a unix socket
// whatever the URL's host.
func dialUnix(socket string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}
}

// droverClient builds a generated v0.0.44 client with its own connection
// (one per simulated client, so that clients do not queue for the
// transport's two idle connections per host). It reaches the controller
// at socket, or over TCP at addr and port.
func droverClient(t transport, socket, addr string, port int, token string) (*v0044.Client, error) {
	tr := &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}
	url := "http://" + net.JoinHostPort(addr, strconv.Itoa(port))
	if t == transportUnix {
		tr.DialContext = dialUnix(socket)
		url = "http://localhost"
	}
	var rt http.RoundTripper = tr
	if t == transportTCP {
		// The bench cluster is named after its controller's port
		// (cluster.go); a node daemon serves its credential service.
		rt = &sack.Transport{Next: tr, Client: sack.NewClient(sack.DefaultSocket("bench" + strconv.Itoa(port)))}
	}
	hc := &http.Client{Transport: rt, Timeout: 2 * time.Minute}
	c, err := v0044.NewClient(url, rootUser{socket: t == transportUnix, token: token}, v0044.WithClient(hc))
	if err != nil {
		return nil, fmt.Errorf("REST client: %w", err)
	}
	return c, nil
}

// rootUser sends X-SLURM-USER-NAME: root over TCP (with root's token when
// it has one) and nothing over the unix socket (the peer's uid is the
// identity there).
type rootUser struct {
	socket bool
	token  string
}

func (rootUser) BearerAuth(context.Context, v0044.OperationName) (v0044.BearerAuth, error) {
	return v0044.BearerAuth{}, ogenerrors.ErrSkipClientSecurity
}

func (u rootUser) Token(context.Context, v0044.OperationName) (v0044.Token, error) {
	if u.token == "" {
		return v0044.Token{}, ogenerrors.ErrSkipClientSecurity
	}
	return v0044.Token{APIKey: u.token}, nil
}

func (u rootUser) User(context.Context, v0044.OperationName) (v0044.User, error) {
	if u.socket {
		return v0044.User{}, ogenerrors.ErrSkipClientSecurity
	}
	return v0044.User{APIKey: "root"}, nil
}

// submitter submits one job and returns its id.
type submitter func(ctx context.Context) (int64, error)

// droverSubmitter returns a submitter of trivial jobs over its own
// generated client.
func droverSubmitter(t transport, socket, addr string, port int, token, workDir string, hold bool) (submitter, error) {
	cl, err := droverClient(t, socket, addr, port, token)
	if err != nil {
		return nil, err
	}
	desc := v0044.V0044JobDescMsg{
		Name:                    v0044.NewOptString("wrap"),
		Script:                  v0044.NewOptString(trivialScript),
		Environment:             jobEnvironment,
		CurrentWorkingDirectory: v0044.NewOptString(workDir),
	}
	if hold {
		desc.Hold = v0044.NewOptBool(true)
	}
	req := v0044.NewOptV0044JobSubmitReq(v0044.V0044JobSubmitReq{Job: v0044.NewOptV0044JobDescMsg(desc)})
	return func(ctx context.Context) (int64, error) {
		res, err := cl.SlurmV0044PostJobSubmit(ctx, req)
		if err != nil {
			return 0, fmt.Errorf("submit: %w", err)
		}
		switch r := res.(type) {
		case *v0044.V0044OpenapiJobSubmitResponse:
			id, ok := r.JobID.Get()
			if !ok {
				return 0, errors.New("submit: answer without job_id")
			}
			return int64(id), nil
		case *v0044.V0044OpenapiJobSubmitResponseStatusCode:
			data, _ := json.Marshal(r.Response.Errors)
			return 0, fmt.Errorf("submit: HTTP %d: %s", r.StatusCode, data)
		default:
			return 0, fmt.Errorf("submit: unexpected answer %T", res)
		}
	}, nil
}

// slurmSubmitter returns a submitter that posts to real slurmrestd on its
// unix socket (rest_auth/local), in the newest version 22.05 serves.
func slurmSubmitter(socket, version, workDir string, hold bool) (submitter, error) {
	env := map[string]string{}
	for _, kv := range jobEnvironment {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	job := map[string]any{"name": "wrap", "current_working_directory": workDir, "environment": env}
	if hold {
		job["hold"] = true
	}
	body, err := json.Marshal(map[string]any{"job": job, "script": trivialScript})
	if err != nil {
		return nil, fmt.Errorf("encode slurmrestd submission: %w", err)
	}
	hc := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{
		MaxIdleConnsPerHost: 4,
		DialContext:         dialUnix(socket),
	}}
	url := "http://localhost/slurm/" + version + "/job/submit"
	return func(ctx context.Context) (int64, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return 0, fmt.Errorf("slurmrestd submit: %w", err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			return 0, fmt.Errorf("slurmrestd submit: %w", err)
		}
		var ans struct {
			JobID *int64 `json:"job_id"`
		}
		if err := json.Unmarshal(data, &ans); err != nil || ans.JobID == nil || *ans.JobID == 0 {
			return 0, fmt.Errorf("slurmrestd submit: HTTP %d: %.300s", resp.StatusCode, data)
		}
		return *ans.JobID, nil
	}, nil
}

// submitLoad runs n submissions from len(clients) concurrent clients and
// returns the wall time and the job ids.
func submitLoad(ctx context.Context, clients []submitter, n int) (time.Duration, []int64, error) {
	var (
		next  atomic.Int64
		mu    sync.Mutex
		ids   = make([]int64, 0, n)
		first error
		wg    sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	begin := time.Now()
	for _, sub := range clients {
		wg.Go(func() {
			var mine []int64
			for next.Add(1) <= int64(n) {
				id, err := sub(ctx)
				if err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					cancel()
					return
				}
				mine = append(mine, id)
			}
			mu.Lock()
			ids = append(ids, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return time.Since(begin), ids, first
}
