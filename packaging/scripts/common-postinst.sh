#!/bin/sh
# drover (common): the SlurmUser account the shipped slurm.conf names, and
# the log folder. Runs as Debian's postinst (configure) and RPM's %post
# (1 on install, 2 or more on upgrade).
set -e
case "$1" in
configure | [0-9]*) ;;
*) exit 0 ;;
esac
nologin=/usr/sbin/nologin
[ -x "$nologin" ] || nologin=/sbin/nologin
if ! getent group slurm >/dev/null; then
	groupadd --system slurm
fi
if ! getent passwd slurm >/dev/null; then
	useradd --system --gid slurm --home-dir /nonexistent --no-create-home \
		--shell "$nologin" --comment "Slurm workload manager" slurm
fi
if [ ! -d /var/log/slurm ]; then
	install -d -o slurm -g slurm -m 0750 /var/log/slurm
fi
exit 0
