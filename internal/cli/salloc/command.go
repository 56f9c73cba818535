package salloc

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// findCommand resolves the command as salloc's search_path does (salloc(1),
// COMMAND PATH RESOLUTION): a name starting with "/" is taken as is, one
// starting with "." from the working directory; any other is looked up in
// PATH, then in the working directory. The file must be executable.
func findCommand(name, cwd, path string) (string, bool) {
	var candidates []string
	switch {
	case strings.HasPrefix(name, "/"):
		candidates = []string{name}
	case strings.HasPrefix(name, "."):
		candidates = []string{filepath.Join(cwd, name)}
	default:
		for dir := range strings.SplitSeq(path, ":") {
			if dir == "" {
				continue
			}
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(cwd, dir)
			}
			candidates = append(candidates, filepath.Join(dir, name))
		}
		candidates = append(candidates, filepath.Join(cwd, name))
	}
	for _, c := range candidates {
		if fi, err := os.Stat(c); err == nil && !fi.IsDir() && unix.Access(c, unix.X_OK) == nil {
			return c, true
		}
	}
	return "", false
}

// terminal is the controlling terminal of an interactive salloc: standard
// input is a terminal and salloc runs in its foreground process group. The
// command then gets the terminal for as long as it runs, and salloc takes
// it back, with the line settings it found, before it exits.
type terminal struct {
	fd    int
	saved *unix.Termios
}

// errNoControllingTerminal is salloc's refusal to run a command on a
// terminal it cannot control.
var errNoControllingTerminal = errors.New("no controlling terminal: please set --no-shell")

// openTerminal reports the terminal of an interactive salloc, nil when
// standard input is no terminal or salloc is in the background (then the
// command runs in a process group of its own without the terminal). A
// terminal that is not salloc's controlling terminal is refused unless no
// command is to run.
func openTerminal(stdin io.Reader, noShell bool) (*terminal, error) {
	f, ok := stdin.(*os.File)
	if !ok {
		return nil, nil
	}
	fd := int(f.Fd())
	saved, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, nil
	}
	tpgid, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	switch {
	case err != nil || tpgid < 0:
		if !noShell {
			return nil, errNoControllingTerminal
		}
		return nil, nil
	case noShell || tpgid != unix.Getpgrp():
		return nil, nil
	}
	return &terminal{fd: fd, saved: saved}, nil
}

// foreground is the terminal's foreground process group.
func (t *terminal) foreground() int {
	pgid, err := unix.IoctlGetInt(t.fd, unix.TIOCGPGRP)
	if err != nil {
		return -1
	}
	return pgid
}

// reclaim makes salloc's process group the terminal's foreground again
// and restores the line settings salloc found (the command may have left
// the terminal raw), as _reset_input_mode does. salloc is in the
// background meanwhile, so SIGTTOU is blocked around the calls.
func (t *terminal) reclaim() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set, old unix.Sigset_t
	sig := uint(syscall.SIGTTOU) - 1
	set.Val[sig/64] |= 1 << (sig % 64)
	if err := unix.PthreadSigmask(unix.SIG_BLOCK, &set, &old); err != nil {
		return
	}
	defer unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	_ = unix.IoctlSetPointerInt(t.fd, unix.TIOCSPGRP, unix.Getpgrp())
	_ = unix.IoctlSetTermios(t.fd, unix.TCSETS, t.saved)
}

// start starts the command in a process group of its own, in the
// terminal's foreground when salloc is interactive (_fork_command). The
// command's signals are the defaults: Go's handlers do not survive exec.
func start(path string, argv []string, dir string, env []string, stdin io.Reader, stdout, stderr io.Writer, term *terminal) (*exec.Cmd, error) {
	cmd := &exec.Cmd{Path: path, Args: argv, Dir: dir, Env: env, Stdin: stdin, Stdout: stdout, Stderr: stderr}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if term != nil {
		cmd.SysProcAttr.Foreground = true
		cmd.SysProcAttr.Ctty = term.fd
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd, nil
}

// strerror words an error as glibc's strerror does ("No such file or
// directory"), which is what Slurm's %m prints.
func strerror(err error) string {
	msg := err.Error()
	var errno syscall.Errno
	if errors.As(err, &errno) {
		msg = errno.Error()
	}
	if msg == "" {
		return msg
	}
	return strings.ToUpper(msg[:1]) + msg[1:]
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
