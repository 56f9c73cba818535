package configless

import "syscall"

func unixUmask(m int) int { return syscall.Umask(m) }
