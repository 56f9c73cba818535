// Package logfile is a daemon's log file as Slurm's daemons keep theirs
// (SlurmctldLogFile, SlurmdLogFile): appended to, and opened again at
// the same path on SIGUSR2, after logrotate has moved the old one away.
package logfile

import (
	"fmt"
	"os"
	"sync"
)

// File is a log file that can be opened again at its path.
type File struct {
	mu   sync.Mutex
	path string
	f    *os.File
}

// Open opens path for appending, creating it (and readable by its owner
// and group only: logs name users and jobs).
func Open(path string) (*File, error) {
	f, err := open(path)
	if err != nil {
		return nil, err
	}
	return &File{path: path, f: f}, nil
}

func open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open log file: %w", err)
	}
	return f, nil
}

// Write appends p to the file as it is now.
func (l *File) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Write(p)
}

// Reopen opens the path again and writes there from now on; should that
// fail, writing goes on to the file already open.
func (l *File) Reopen() error {
	f, err := open(l.path)
	if err != nil {
		return err
	}
	l.mu.Lock()
	old := l.f
	l.f = f
	l.mu.Unlock()
	return old.Close()
}

// Close closes the file.
func (l *File) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}
