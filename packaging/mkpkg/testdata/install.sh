#!/bin/bash
# Installs Drover's packages into a throwaway root, checks what they made,
# runs a controller, upgrades the packages and checks that the
# controller's state, the edited slurm.conf and the cluster key are kept.
#
#   install.sh FORMAT V1DIR V2DIR      (as root, from the test)
#
# The root is an overlay of this machine's own file system with its
# writes in a tmpfs, in mount, network and PID namespaces of its own: the
# machine's /usr, /etc and package databases are never written, and
# whatever the script starts dies with the namespace.
set -euo pipefail

if [ "${1:-}" = inside ]; then
	shift
	format=$1
	fail() { echo "FAIL: $*" >&2; exit 1; }
	install_pkgs() { # DIR
		if [ "$format" = deb ]; then
			DEBIAN_FRONTEND=noninteractive dpkg -i "$1"/*.deb </dev/null
		else
			rpm -U --nodeps "$1"/*.rpm </dev/null
		fi
	}
	# Slurm's own packages own /usr/bin/sbatch...: the packages conflict
	# with them, so they go first (only in this throwaway root).
	if [ "$format" = deb ]; then
		for p in slurm-client slurmctld slurmd slurmrestd sackd; do
			if dpkg -s "$p" >/dev/null 2>&1; then
				dpkg --remove --force-depends "$p" >/dev/null
			fi
		done
	else
		rpm --initdb
	fi
	# A machine that never ran Slurm: no configuration, state or spool
	# left by it (this one may have them).
	rm -rf /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
	ip link set lo up

	echo "== install 0.1.0"
	install_pkgs /pkgs/v1
	drover --version | grep -q "^drover 0.1.0 " || fail "drover --version: $(drover --version)"
	for c in sacct sacctmgr salloc sbatch scancel scontrol sdiag seff sinfo sprio squeue sreport srun sshare sstat; do
		out=$("/usr/bin/$c" --version) || fail "$c --version failed"
		# seff says its own version, as Slurm's contributed seff does.
		case "$out" in slurm\ * | "seff Version "*) ;; *) fail "$c --version: $out" ;; esac
	done
	getent passwd slurm >/dev/null || fail "no slurm user"
	getent passwd slurmrestd >/dev/null || fail "no slurmrestd user"
	[ "$(stat -c '%U %a' /var/spool/slurmctld)" = "slurm 700" ] || fail "state folder: $(stat -c '%U %a' /var/spool/slurmctld)"
	[ "$(stat -c '%U %a' /etc/slurm/slurm.key)" = "slurm 600" ] || fail "key: $(stat -c '%U %a' /etc/slurm/slurm.key)"
	[ -x /usr/libexec/drover/drover-spank-nccl ] || fail "no NCCL plugin"
	man -w sbatch >/dev/null 2>&1 || [ -f /usr/share/man/man1/sbatch.1.gz ] || fail "no sbatch manual page"
	key=$(sha256sum /etc/slurm/slurm.key)

	# The admin's edit, which no upgrade may undo.
	echo "# edited by the admin" >>/etc/slurm/slurm.conf

	start_controller() {
		setpriv --reuid slurm --regid slurm --clear-groups \
			drover controller >/tmp/controller.log 2>&1 &
		pid=$!
		for _ in $(seq 600); do
			if scontrol ping 2>/dev/null | grep -q "is UP"; then
				return
			fi
			sleep 0.1
		done
		cat /tmp/controller.log >&2
		fail "the controller did not come up"
	}
	stop_controller() {
		kill "$pid"
		wait "$pid" || true
	}
	start_controller
	id=$(sbatch --parsable --hold --job-name=kept --wrap=true) || fail "sbatch: $id"
	stop_controller

	echo "== upgrade to 0.2.0"
	install_pkgs /pkgs/v2
	drover --version | grep -q "^drover 0.2.0 " || fail "after the upgrade, drover --version: $(drover --version)"
	grep -q "^# edited by the admin" /etc/slurm/slurm.conf || fail "the upgrade replaced the edited slurm.conf"
	[ "$(sha256sum /etc/slurm/slurm.key)" = "$key" ] || fail "the upgrade replaced the cluster key"
	start_controller
	got=$(squeue -h -j "$id" -o "%i %j %T %r") || fail "squeue after the upgrade"
	[ "$got" = "$id kept PENDING JobHeldUser" ] || fail "job $id after the upgrade: '$got'"
	stop_controller

	echo "== remove"
	if [ "$format" = deb ]; then
		dpkg --remove drover-controller >/dev/null
		[ -d /var/spool/slurmctld ] || fail "removal deleted the state"
		dpkg --purge drover-controller >/dev/null
		[ ! -e /var/spool/slurmctld ] || fail "purge kept the state"
	else
		rpm -e --nodeps drover-controller
		[ -d /var/spool/slurmctld ] || fail "removal deleted the state"
	fi
	echo "OK"
	exit 0
fi

format=$1 v1=$2 v2=$3
self=$(readlink -f "$0")
work=$(mktemp -d /tmp/drover-pkgroot-XXXXXX)
trap 'rmdir "$work" 2>/dev/null || true' EXIT
unshare --mount --net --pid --fork --kill-child --propagation private -- bash -euo pipefail -c '
	work=$1 self=$2 format=$3 v1=$4 v2=$5
	mount -t tmpfs tmpfs "$work"
	mkdir "$work/upper" "$work/work" "$work/root"
	mount -t overlay overlay -o "lowerdir=/,upperdir=$work/upper,workdir=$work/work" "$work/root"
	r=$work/root
	mount -t proc proc "$r/proc"
	mount --bind /dev "$r/dev"
	mount -t tmpfs tmpfs "$r/tmp"
	mount -t tmpfs tmpfs "$r/run"
	mkdir -p "$r/pkgs/v1" "$r/pkgs/v2"
	cp "$v1"/*."$format" "$r/pkgs/v1/"
	cp "$v2"/*."$format" "$r/pkgs/v2/"
	cp "$self" "$r/pkgs/install.sh"
	exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C /bin/bash /pkgs/install.sh inside "$format"
' _ "$work" "$self" "$format" "$v1" "$v2"
