#!/bin/sh
# {{.Package}}: stops and disables {{.Unit}} when the package is removed,
# not when it is upgraded. Debian's prerm (remove) and RPM's %preun ($1 is
# 0 on removal).
set -e
case "$1" in
remove | 0) ;;
*) exit 0 ;;
esac
if [ -d /run/systemd/system ]; then
	systemctl stop {{.Unit}} || true
	systemctl disable {{.Unit}} || true
fi
exit 0
