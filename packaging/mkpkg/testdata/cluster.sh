#!/bin/bash
# Follows docs/INSTALL.md on three hosts made for the test, from the deb
# packages in PKGDIR: a controller host (ctl) and two compute nodes
# (node1, node2) that fetch their configuration from it (configless),
# then runs jobs across them.
#
#   cluster.sh PKGDIR      (as root, from the test)
#
# Each host is an overlay of this machine's own file system with its
# writes in a tmpfs, in network, UTS and mount namespaces of its own,
# joined by a bridge in a network namespace of the test's: the machine's
# files, package databases and network are never touched, and everything
# dies with the PID namespace the whole run lives in. One deviation from
# INSTALL.md: the node daemons track jobs by process group
# (--no-cgroups), so that no test job makes a cgroup on the machine.
set -euo pipefail

case "${1:-}" in
host)
	# host NAME WORK PKGDIR: becomes host NAME and waits in its root,
	# where PKGDIR is /pkgs.
	name=$2 work=$3 pkgs=$4
	hostname "$name"
	r=$work/$name
	mkdir -p "$work/upper-$name" "$work/work-$name" "$r"
	mount -t overlay overlay -o "lowerdir=/,upperdir=$work/upper-$name,workdir=$work/work-$name" "$r"
	mount -t proc proc "$r/proc"
	mount --bind /dev "$r/dev"
	mount -t tmpfs tmpfs "$r/tmp"
	mount -t tmpfs tmpfs "$r/run"
	mkdir -p "$r/pkgs"
	mount --bind -o ro "$pkgs" "$r/pkgs"
	echo ready
	exec chroot "$r" sleep infinity
	;;
outer)
	pkgs=$2 work=$3 self=$4
	mount -t tmpfs tmpfs "$work"
	ip link set lo up
	ip link add br0 type bridge
	ip link set br0 up
	declare -A pid
	i=0
	for h in ctl node1 node2; do
		i=$((i + 1))
		unshare --net --uts --mount --propagation private -- bash "$self" host "$h" "$work" "$pkgs" >"$work/$h.out" 2>&1 &
		pid[$h]=$!
		for _ in $(seq 100); do
			grep -q ready "$work/$h.out" 2>/dev/null && break
			sleep 0.1
		done
		grep -q ready "$work/$h.out" || { cat "$work/$h.out"; echo "FAIL: host $h did not start"; exit 1; }
		ip link add "veth-$h" type veth peer name eth0 netns "${pid[$h]}"
		ip link set "veth-$h" master br0 up
		nsenter -t "${pid[$h]}" -n ip addr add "10.201.0.$i/24" dev eth0
		nsenter -t "${pid[$h]}" -n ip link set eth0 up
		nsenter -t "${pid[$h]}" -n ip link set lo up
	done
	# on HOST CMD: runs CMD (bash) as root on HOST, in its root.
	on() {
		local h=$1
		shift
		nsenter -t "${pid[$h]}" -n -u -m -r -w -- /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C /bin/bash -c "$*"
	}
	fail() {
		echo "FAIL: $*"
		for h in ctl node1 node2; do
			echo "--- $h logs"
			on "$h" 'tail -n 30 /tmp/*.log 2>/dev/null' || true
		done
		exit 1
	}
	for h in ctl node1 node2; do
		on "$h" '
			printf "10.201.0.1 ctl\n10.201.0.2 node1\n10.201.0.3 node2\n" >>/etc/hosts
			for p in slurm-client slurmctld slurmd slurmrestd sackd; do
				if dpkg -s $p >/dev/null 2>&1; then dpkg --remove --force-depends $p >/dev/null 2>&1; fi
			done
			rm -rf /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
		'
	done

	echo "== 1. install"
	on ctl 'dpkg -i /pkgs/drover_*.deb /pkgs/drover-controller_*.deb /pkgs/drover-client_*.deb </dev/null >/tmp/dpkg.log 2>&1' || fail "install on ctl"
	for h in node1 node2; do
		on "$h" 'dpkg -i /pkgs/drover_*.deb /pkgs/drover-client_*.deb /pkgs/drover-node_*.deb </dev/null >/tmp/dpkg.log 2>&1' || fail "install on $h"
	done

	echo "== 2. slurm.conf on ctl"
	on ctl 'cat >/etc/slurm/slurm.conf' <<-'CONF'
		ClusterName=lab
		SlurmctldHost=ctl
		SlurmUser=slurm
		StateSaveLocation=/var/spool/slurmctld
		SlurmdSpoolDir=/var/spool/slurmd
		SlurmctldParameters=enable_configless
		SchedulerType=sched/backfill
		SelectType=select/cons_tres
		ReturnToService=2
		MetricsType=metrics/openmetrics
		NodeName=node[1-2] CPUs=1 RealMemory=500 State=UNKNOWN
		PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP
	CONF

	echo "== 3. the key to every host"
	for h in node1 node2; do
		on ctl 'cat /etc/slurm/slurm.key' | on "$h" 'mkdir -p /etc/slurm && umask 077 && cat >/etc/slurm/slurm.key && chown root:root /etc/slurm/slurm.key'
	done

	echo "== 4. start"
	on ctl 'setpriv --reuid slurm --regid slurm --clear-groups drover controller >/tmp/controller.log 2>&1' &
	# Generous waits: CI runs this beside other tests on two cores.
	for _ in $(seq 300); do
		on ctl 'scontrol ping 2>/dev/null | grep -q "is UP"' && break
		sleep 0.2
	done
	on ctl 'scontrol ping' | grep -q "Slurmctld(primary) at ctl is UP" || fail "scontrol ping: $(on ctl 'scontrol ping' 2>&1)"
	for h in node1 node2; do
		on "$h" 'drover node --conf-server ctl --no-cgroups >/tmp/node.log 2>&1' &
	done

	echo "== 5. check"
	for _ in $(seq 450); do
		[ "$(on ctl 'sinfo -h -o "%D %t"' 2>/dev/null)" = "2 idle" ] && break
		sleep 0.2
	done
	got=$(on ctl 'sinfo -h -o "%P %a %D %t %N"')
	[ "$got" = "batch* up 2 idle node[1-2]" ] || fail "sinfo: '$got'"
	on node1 '[ -f /var/spool/slurmd/conf-cache/slurm.conf ]' || fail "node1 has no configless copy of slurm.conf"
	got=$(on ctl 'srun -N2 hostname | sort | tr "\n" " "') || fail "srun -N2 hostname"
	[ "$got" = "node1 node2 " ] || fail "srun -N2 hostname: '$got'"
	on ctl 'cd /tmp && sbatch --wait -N2 --wrap "srun true" >/tmp/sbatch.out' || fail "sbatch --wait: $(on ctl 'cat /tmp/sbatch.out')"
	echo OK
	;;
*)
	pkgs=$1
	self=$(readlink -f "$0")
	work=$(mktemp -d /tmp/drover-pkgcluster-XXXXXX)
	trap 'rmdir "$work" 2>/dev/null || true' EXIT
	unshare --mount --net --pid --fork --kill-child --mount-proc --propagation private -- bash "$self" outer "$pkgs" "$work" "$self"
	;;
esac
