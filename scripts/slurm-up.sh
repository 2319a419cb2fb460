#!/bin/sh
# Brings up a one-node Slurm cluster for tests and benches, as root, without systemd.
# Usage: slurm-up.sh <scratch-dir> [cpus]
# Everything lives in <scratch-dir>: slurm.conf, state, spool, logs, the munge socket and the
# daemons' pid files (munged.pid, slurmctld.pid, slurmd.pid). Clients find the cluster through
# SLURM_CONF=<scratch-dir>/slurm.conf. Stop it with slurm-down.sh <scratch-dir> (by those pids).
# Ports: SLURMCTLD_PORT, SLURMD_PORT (defaults 6817, 6818).
# SLURM_REST=1 also starts slurmrestd (apt-get install slurmrestd slurm-wlm-jwt-plugin) on
# 127.0.0.1:${SLURMRESTD_PORT:-6820}, with JWT: a key in <scratch-dir>/jwt.key, the controller told
# AuthAltTypes=auth/jwt, slurmrestd run as nobody with SLURM_JWT=daemon, and a token for root
# (lifespan SLURM_TOKEN_LIFESPAN, default 1 day) in <scratch-dir>/rest.token (mode 0600); its pid
# in slurmrestd.pid. It prints SLURM_REST_URL and SLURM_REST_TOKEN_FILE too.
set -eu
dir=$1
cpus=${2:-$(nproc)}
rest=${SLURM_REST:-0}
tools="munged slurmctld slurmd sbatch"
[ "$rest" = 1 ] && tools="$tools slurmrestd"
for tool in $tools; do
  command -v "$tool" >/dev/null 2>&1 || { echo "slurm-up: $tool is missing (apt-get install slurmctld slurmd slurm-client munge, and slurmrestd slurm-wlm-jwt-plugin for SLURM_REST=1)" >&2; exit 3; }
done
[ "$(id -u)" = 0 ] || { echo "slurm-up: must run as root (the daemons run as root here)" >&2; exit 3; }
mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
dir=$(cd "$dir" && pwd)
# munged runs as the munge user: it must reach its own directory inside.
chmod 0711 "$dir"
# munge: its own key, socket and pid file in the scratch dir, run as the munge user.
chown munge:munge "$dir/munge"
chmod 0711 "$dir/munge"
[ -f "$dir/munge/munge.key" ] || runuser -u munge -- mungekey --create --keyfile="$dir/munge/munge.key" >/dev/null
runuser -u munge -- /usr/sbin/munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed"
cp "$dir/munge/munged.pid" "$dir/munged.pid"
host=$(hostname -s)
cat > "$dir/slurm.conf" <<CONF
ClusterName=taskyard
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
KillWait=5
MinJobAge=300
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SlurmdParameters=config_overrides
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldPort=${SLURMCTLD_PORT:-6817}
SlurmdPort=${SLURMD_PORT:-6818}
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.log
GresTypes=gpu
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=4096 State=UNKNOWN
PartitionName=main Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
if [ "$rest" = 1 ]; then
  [ -f "$dir/jwt.key" ] || { dd if=/dev/urandom of="$dir/jwt.key" bs=32 count=1 2>/dev/null; chmod 0600 "$dir/jwt.key"; }
  printf 'AuthAltTypes=auth/jwt\nAuthAltParameters=jwt_key=%s\n' "$dir/jwt.key" >> "$dir/slurm.conf"
fi
export SLURM_CONF="$dir/slurm.conf"
/usr/sbin/slurmctld -f "$SLURM_CONF"
/usr/sbin/slurmd -f "$SLURM_CONF" -N localhost
# Ready when the node answers idle (about a second).
i=0
until sinfo -h -o '%T' 2>/dev/null | grep -q idle; do
  i=$((i + 1))
  [ $i -lt 100 ] || { echo "slurm-up: the node did not become idle within 20 s (see $dir/log)" >&2; exit 4; }
  sleep 0.2
done
echo "SLURM_CONF=$SLURM_CONF"
if [ "$rest" = 1 ]; then
  port=${SLURMRESTD_PORT:-6820}
  (umask 077 && scontrol token username=root lifespan="${SLURM_TOKEN_LIFESPAN:-86400}" | sed -n 's/^SLURM_JWT=//p' > "$dir/rest.token")
  [ -s "$dir/rest.token" ] || { echo "slurm-up: scontrol token gave no token (see $dir/log)" >&2; exit 4; }
  # slurmrestd refuses to run as root; with JWT it acts as each request's user.
  SLURM_JWT=daemon setsid /usr/sbin/slurmrestd -f "$SLURM_CONF" -u nobody -g nogroup -a rest_auth/jwt -s openapi/v0.0.38 "127.0.0.1:$port" \
    >"$dir/log/slurmrestd.log" 2>&1 </dev/null &
  echo $! > "$dir/slurmrestd.pid"
  i=0
  # Any HTTP answer (401 without a token) means it listens.
  until [ "$(curl -s -o /dev/null -w "%{http_code}" "http://127.0.0.1:$port/openapi/v3" 2>/dev/null)" != 000 ]; do
    i=$((i + 1))
    [ $i -lt 100 ] || { echo "slurm-up: slurmrestd did not answer within 20 s (see $dir/log/slurmrestd.log)" >&2; exit 4; }
    sleep 0.2
  done
  echo "SLURM_REST_URL=http://127.0.0.1:$port"
  echo "SLURM_REST_TOKEN_FILE=$dir/rest.token"
fi
