#!/bin/sh
# {{.Package}}: removal keeps {{if .Dirs}}the daemon's state and spool{{else}}everything it made{{end}}; a purge (Debian)
# deletes {{if .Purge}}{{range $i, $d := .Purge}}{{if $i}} and {{end}}{{$d}}{{end}}{{else}}nothing more{{end}}. Debian's postrm and RPM's %postun.
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
{{- if .Purge}}
if [ "$1" = purge ]; then
	rm -rf{{range .Purge}} {{.}}{{end}}
fi
{{- end}}
exit 0
