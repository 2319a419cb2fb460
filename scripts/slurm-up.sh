#!/bin/sh
# Brings up a one-node Slurm cluster for tests and benches, as root, without systemd.
# Usage: slurm-up.sh <scratch-dir> [cpus]
# Everything lives in <scratch-dir>: slurm.conf, state, spool, logs, the munge socket and the
# daemons' pid files (munged.pid, slurmctld.pid, slurmd.pid). Clients find the cluster through
# SLURM_CONF=<scratch-dir>/slurm.conf. Stop it with slurm-down.sh <scratch-dir> (by those pids).
set -eu
dir=$1
cpus=${2:-$(nproc)}
for tool in munged slurmctld slurmd sbatch; do
  command -v "$tool" >/dev/null 2>&1 || { echo "slurm-up: $tool is missing (apt-get install slurmctld slurmd slurm-client munge)" >&2; exit 3; }
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
