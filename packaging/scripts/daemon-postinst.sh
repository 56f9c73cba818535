#!/bin/sh
# {{.Package}}: {{.What}}. Debian's postinst (configure; $2 is the
# version configured before, empty on a first install) and RPM's %post ($1
# is 1 on a first install, 2 or more on an upgrade).
set -e
case "$1" in
configure | [0-9]*) ;;
*) exit 0 ;;
esac
{{- if .User}}
nologin=/usr/sbin/nologin
[ -x "$nologin" ] || nologin=/sbin/nologin
if ! getent group {{.User}} >/dev/null; then
	groupadd --system {{.User}}
fi
if ! getent passwd {{.User}} >/dev/null; then
	useradd --system --gid {{.User}} --home-dir /nonexistent --no-create-home \
		--shell "$nologin" --comment "{{.UserComment}}" {{.User}}
fi
{{- end}}
{{- range .Dirs}}
if [ ! -d {{.Path}} ]; then
	install -d -o {{.Owner}} -g {{.Owner}} -m {{.Mode}} {{.Path}}
fi
{{- end}}
{{- if .Keygen}}
# The cluster key, on the first install when there is none: drover keygen
# never replaces a key it finds.
if [ -f /etc/slurm/slurm.conf ]; then
	drover keygen --conf /etc/slurm/slurm.conf ||
		echo "{{.Package}}: could not make the cluster key; run drover keygen" >&2
fi
{{- end}}
first=
case "$1" in
configure) [ -n "$2" ] || first=yes ;;
1) first=yes ;;
esac
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
	if [ -n "$first" ]; then
		# Enabled, not started: slurm.conf is edited first.
		systemctl enable {{.Unit}} || true
	else
		# An upgrade restarts a running daemon on the new program.
		systemctl try-restart {{.Unit}} || true
	fi
fi
exit 0
