package testutil

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
)

// Postgres is a PostgreSQL server of Debian's package, started for a
// test in a temporary folder on a free loopback port, with a password
// of its own: no system service is used or left behind.
type Postgres struct {
	// URL reaches the server's "postgres" database as its superuser.
	URL      string
	Host     string
	Port     int
	User     string
	Password string
	// SocketDir holds the server's unix socket: hosts of a test network
	// (testutil.Net), which share the file system but not loopback,
	// reach it there.
	SocketDir string
	cmd       *exec.Cmd
	dir       string
}

// pgBin finds a PostgreSQL program: on PATH, or in Debian's versioned
// folder.
func pgBin(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/" + name)
	if len(m) > 0 {
		return m[len(m)-1], nil
	}
	return "", fmt.Errorf("%s not found (Debian's postgresql package)", name)
}

// StartPostgres starts a server; the caller stops it with Stop. It
// returns an error when PostgreSQL is not installed. The server runs as
// the user postgres when the caller is root (PostgreSQL refuses root),
// and dies with the caller.
func StartPostgres() (*Postgres, error) {
	initdb, err := pgBin("initdb")
	if err != nil {
		return nil, err
	}
	server, err := pgBin("postgres")
	if err != nil {
		return nil, err
	}
	removeStalePostgres()
	dir, err := os.MkdirTemp("", "drover-pg-")
	if err != nil {
		return nil, err
	}
	p := &Postgres{dir: dir, SocketDir: dir, Host: "127.0.0.1", User: "drover"}
	fail := func(err error) (*Postgres, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return fail(fmt.Errorf("PostgreSQL refuses to run as root, and there is no user postgres: %w", err))
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return fail(err)
		}
	}
	var pw [16]byte
	rand.Read(pw[:])
	p.Password = hex.EncodeToString(pw[:])
	pwFile := filepath.Join(dir, "pw")
	data := filepath.Join(dir, "data")
	if err := os.WriteFile(pwFile, []byte(p.Password+"\n"), 0o600); err != nil {
		return fail(err)
	}
	if cred != nil {
		os.Chown(pwFile, int(cred.Uid), int(cred.Gid))
	}
	init := exec.Command(initdb, "-D", data, "-U", p.User, "--auth=scram-sha-256", "--pwfile="+pwFile, "-E", "UTF8", "--no-sync", "--no-instructions")
	init.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := init.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %w: %s", err, out))
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	p.Port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	p.cmd = exec.Command(server, "-D", data, "-p", strconv.Itoa(p.Port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=50",
		// Shared memory segments in the data folder, not /dev/shm: a
		// server stopped hard leaves nothing behind outside it.
		"-c", "dynamic_shared_memory_type=mmap")
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL, Setpgid: true}
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return fail(err)
	}
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		logf.Close()
		return fail(fmt.Errorf("start postgres: %w", err))
	}
	logf.Close()
	p.URL = fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/postgres?sslmode=disable", p.User, p.Password, p.Port)
	db, err := sql.Open("pgx", p.URL)
	if err != nil {
		p.Stop()
		return nil, err
	}
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			return p, nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			p.Stop()
			return nil, fmt.Errorf("postgres did not start: %v: %s", err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Database makes a new, empty database and returns its URL.
func (p *Postgres) Database(name string) (string, error) {
	db, err := sql.Open("pgx", p.URL)
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE DATABASE "` + name + `"`); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", p.User, p.Password, p.Port, name), nil
}

// Stop ends the server and removes its folder.
func (p *Postgres) Stop() {
	if p.cmd != nil && p.cmd.Process != nil {
		// SIGQUIT is PostgreSQL's immediate shutdown; the group takes
		// its backends along.
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGQUIT)
		done := make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	os.RemoveAll(p.dir)
}

// removeStalePostgres deletes the folders of servers a test binary left
// when it died before Stop (a panic skips TestMain's cleanup; the
// server itself dies with it, Pdeathsig): those over an hour old whose
// server no longer runs, so that a server another test starts now is
// never touched.
func removeStalePostgres() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "drover-pg-*"))
	for _, d := range dirs {
		st, err := os.Stat(d)
		if err != nil || time.Since(st.ModTime()) < time.Hour {
			continue
		}
		if pid, err := os.ReadFile(filepath.Join(d, "data", "postmaster.pid")); err == nil {
			first, _, _ := strings.Cut(string(pid), "\n")
			if n, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && syscall.Kill(n, 0) == nil {
				continue // still running
			}
		}
		os.RemoveAll(d)
	}
}
