#!/usr/bin/env bash
# realslurm-acct-fill.sh - fill the REAL Slurm 22.05 reference cluster's
# accounting database (see /work/shared/real-slurm/up.sh) with N synthetic
# finished jobs, so that real `sacct` can be timed over a large job store.
#
#   realslurm-acct-fill.sh [N]      delete earlier synthetic jobs, insert N (default 1000000)
#   realslurm-acct-fill.sh --remove only delete the synthetic jobs (and the uid
#                                   records), then OPTIMIZE the table to shrink it
#
# Rows go straight into <cluster>_job_table with INSERT ... SELECT from
# MariaDB's SEQUENCE engine (seq_A_to_B), in chunks of 100000. Synthetic job k
# (0-based) has id_job 10000000+k (above every real job id), uid/gid
# 20000+k%1000, state COMPLETED (3), one CPU and 1000 MB on one of n1..n4,
# partition gpu, account refacct, and an end time spread evenly over the 30
# days before T0, where T0 = the hourly rollup mark in <cluster>_last_ran_table
# (never later than now). Ending before that mark keeps the jobs out of every
# future usage rollup, so --remove leaves the usage tables as they were.
# Jobs of one user are 2592 s apart, so each uid has ~33 jobs per day.
#
# sacct 22.05 refuses `-u UID` for a uid that getpwuid() cannot resolve, so the
# fill also makes uids 20000..20999 resolvable as synth<uid> through
# nss-systemd JSON drop-ins in /run/userdb (no edit of /etc/passwd); uids that
# already resolve are left alone. --remove deletes exactly those files.
#
# Env: REF_SLURM_RUN (default /var/lib/real-slurm-ref), MYSQL_SOCK
# (default $REF_SLURM_RUN/mysqlrun/mysql.sock), ACCT_DB (default slurm_acct_db).
# Needs root (socket auth to MariaDB, writes /run/userdb).
set -euo pipefail

RUN=${REF_SLURM_RUN:-/var/lib/real-slurm-ref}
SOCK=${MYSQL_SOCK:-$RUN/mysqlrun/mysql.sock}
DB=${ACCT_DB:-slurm_acct_db}
CONF=${SLURM_CONF:-$RUN/etc/slurm.conf}
FIRST_ID=10000000
UID0=20000
NUIDS=1000
SPAN=$((30 * 86400))
CHUNK=100000
USERDB=/run/userdb

log() { printf '[acct-fill] %s\n' "$*" >&2; }
sql() { mariadb --socket="$SOCK" -u root -N -B "$DB" "$@"; }

mode=fill
N=1000000
case "${1:-}" in
  --remove) mode=remove ;;
  -h | --help) sed -n '2,27p' "$0"; exit 0 ;;
  '') ;;
  *) [[ $1 =~ ^[0-9]+$ ]] || { log "usage: $0 [N|--remove]"; exit 2; }; N=$1 ;;
esac

CLUSTER=$(sed -n 's/^[[:space:]]*ClusterName=\([^[:space:]#]*\).*/\1/Ip' "$CONF" | tail -1)
[[ -n $CLUSTER ]] || { log "no ClusterName in $CONF"; exit 1; }
JT="${CLUSTER}_job_table"
sql -e "SELECT 1 FROM \`$JT\` LIMIT 0" || { log "table $DB.$JT not reachable via $SOCK"; exit 1; }

remove_rows() {
  local t0 n total=0
  t0=$(date +%s%N)
  # chunked deletes keep each transaction (undo log) small
  while :; do
    n=$(sql -e "DELETE FROM \`$JT\` WHERE id_job >= $FIRST_ID LIMIT 200000; SELECT ROW_COUNT();")
    total=$((total + n))
    ((n > 0)) || break
  done
  log "deleted $total synthetic job rows in $((($(date +%s%N) - t0) / 1000000)) ms"
}

remove_users() {
  [[ -d $USERDB ]] || return 0
  local n=0 u
  for ((u = UID0; u < UID0 + NUIDS; u++)); do
    if [[ -e $USERDB/synth$u.user ]] && grep -q '"realslurm-acct-fill"' "$USERDB/synth$u.user"; then
      rm -f "$USERDB/synth$u.user" "$USERDB/$u.user"; n=$((n + 1))
    fi
  done
  rmdir "$USERDB" 2>/dev/null || true
  ((n == 0)) || log "removed $n uid records from $USERDB"
}

add_users() {
  local n=0 u
  local -A known=()
  mkdir -p "$USERDB"
  while IFS=: read -r _ _ u _; do known[$u]=1; done < <(getent passwd)
  for ((u = UID0; u < UID0 + NUIDS; u++)); do
    [[ -e $USERDB/synth$u.user || -n ${known[$u]:-} ]] && continue
    printf '{"userName":"synth%d","uid":%d,"gid":%d,"realName":"realslurm-acct-fill","disposition":"regular","homeDirectory":"/nonexistent","shell":"/usr/sbin/nologin"}\n' \
      "$u" "$u" "$u" >"$USERDB/synth$u.user"
    ln -sfn "synth$u.user" "$USERDB/$u.user"
    n=$((n + 1))
  done
  log "made $n uids resolvable via $USERDB (nss-systemd)"
}

remove_rows
if [[ $mode == remove ]]; then
  # give the freed pages (~800 MB after a 1M fill) back to the file system
  sql -e "OPTIMIZE TABLE \`$JT\`" >/dev/null
  remove_users
  exit 0
fi
((N > 0)) || exit 0

# T0: end of the span; before the hourly rollup mark so no rollup sees the jobs.
T0=$(sql -e "SELECT LEAST(UNIX_TIMESTAMP(), COALESCE(MAX(hourly_rollup), UNIX_TIMESTAMP() DIV 3600 * 3600))
             FROM \`${CLUSTER}_last_ran_table\`")
log "inserting $N jobs into $DB.$JT (ids $FIRST_ID..$((FIRST_ID + N - 1)), end times $((T0 - SPAN))..$T0)"

t0=$(date +%s%N)
for ((lo = 0; lo < N; lo += CHUNK)); do
  hi=$((lo + CHUNK - 1)); ((hi < N)) || hi=$((N - 1))
  # e = end, r = run time (60..3659 s), w = wait in queue (0..599 s)
  sql -e "
INSERT INTO \`$JT\`
  (mod_time, deleted, account, cpus_req, exit_code, flags, job_name, id_assoc,
   id_job, id_qos, id_resv, id_wckey, id_user, id_group, het_job_id, het_job_offset,
   state_reason_prev, mem_req, nodelist, nodes_alloc, node_inx, \`partition\`,
   priority, state, timelimit, time_submit, time_eligible, time_start, time_end,
   work_dir, submit_line, tres_alloc, tres_req)
SELECT e + 1, 0, 'refacct', 1, 0, 20, CONCAT('synth', k % 97), 0,
       $FIRST_ID + k, 1, 0, 0, $UID0 + k % $NUIDS, $UID0 + k % $NUIDS, 0, 4294967294,
       0, 9223372036854776808, CONCAT('n', 1 + k % 4), 1, CAST(k % 4 AS CHAR), 'gpu',
       1000, 3, 60, e - r - w, e - r - w, e - r, e,
       '/tmp', '/usr/bin/sbatch --wrap=true', '1=1,2=1000,4=1', '1=1,2=1000,4=1'
FROM (SELECT seq AS k,
             $T0 - $SPAN + (seq * $SPAN) DIV $N AS e,
             60 + (seq * 7919) % 3600 AS r,
             (seq * 131) % 600 AS w
      FROM seq_${lo}_to_${hi}) s;"
  log "  $((hi + 1))/$N rows, $((($(date +%s%N) - t0) / 1000000)) ms"
done
ms=$((($(date +%s%N) - t0) / 1000000))
add_users

read -r rows data idx < <(sql -e "ANALYZE TABLE \`$JT\`" >/dev/null
  sql -e "SELECT (SELECT COUNT(*) FROM \`$JT\`), DATA_LENGTH, INDEX_LENGTH FROM information_schema.TABLES
          WHERE TABLE_SCHEMA = '$DB' AND TABLE_NAME = '$JT'")
log "inserted $N jobs in $ms ms; $JT now holds $rows rows"
log "table size: data $((data / 1048576)) MiB + indexes $((idx / 1048576)) MiB = $(((data + idx) / 1048576)) MiB"
