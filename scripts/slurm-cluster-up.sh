#!/bin/sh
# Brings up a multi-node Slurm cluster on this one machine, as root, without systemd: munged and
# slurmctld on the host, and one slurmd per node, each in its own network namespace (iproute2
# `ip netns`, a veth pair into a host bridge, an address of its own, `NodeAddr` per node). The file
# system stays shared, as a cluster's shared file system would be: the workspace has the same path
# on every node.
# Usage: slurm-cluster-up.sh <scratch-dir> [nodes=3] [gpu-nodes=1]
# The last <gpu-nodes> nodes declare `Gres=gpu:2` (fake device files, see below), so a GPU
# request (--gres=gpu:N) lands on them. Nodes are named <tag>n1, <tag>n2, ... where <tag> is derived
# from the scratch dir's path, so clusters in different scratch dirs can run side by side (their
# namespaces, links and subnet differ). Ports come from SLURMCTLD_PORT / SLURMD_PORT (7200-7299 by
# default). Everything the script made is written to <scratch-dir>/cluster.env (names, addresses)
# and the daemons' pids to <scratch-dir>/*.pid; slurm-cluster-down.sh <scratch-dir> undoes it all.
# Exit 3: this machine cannot run it (a tool is missing, not root, no network namespaces).
set -eu
dir=$1
nodes=${2:-3}
gpu_nodes=${3:-1}
for tool in munged slurmctld slurmd sbatch ip; do
  command -v "$tool" >/dev/null 2>&1 || { echo "slurm-cluster-up: $tool is missing (apt-get install slurmctld slurmd slurm-client munge iproute2)" >&2; exit 3; }
done
[ "$(id -u)" = 0 ] || { echo "slurm-cluster-up: must run as root (network namespaces and the daemons need it)" >&2; exit 3; }
mkdir -p "$dir/munge" "$dir/state" "$dir/log"
dir=$(cd "$dir" && pwd)
# Six hex digits of the path: names that fit Linux's 15-character link names, and a /24 of 10.0.0.0/8.
hash=$(printf %s "$dir" | md5sum | cut -c1-6)
tag="ty$hash"
net="10.$((0x$(echo "$hash" | cut -c1-2))).$((0x$(echo "$hash" | cut -c3-4)))"
bridge="${tag}br"
# A probe first: where namespaces cannot be made the caller skips, with this reason.
ip netns add "${tag}probe" 2>"$dir/log/netns-probe.err" || { echo "slurm-cluster-up: this machine cannot make network namespaces ($(head -1 "$dir/log/netns-probe.err"))" >&2; exit 3; }
ip netns del "${tag}probe"
# What down must undo, written before it is made (down tolerates what was never made).
{ echo "TAG=$tag"; echo "BRIDGE=$bridge"; echo "NODES=$nodes"; echo "NET=$net"; } > "$dir/cluster.env"

# munge: its own key, socket and pid file in the scratch dir, run as the munge user. The socket is a
# file-system path: every namespace reaches it.
chmod 0711 "$dir"
chown munge:munge "$dir/munge"
chmod 0711 "$dir/munge"
[ -f "$dir/munge/munge.key" ] || runuser -u munge -- mungekey --create --keyfile="$dir/munge/munge.key" >/dev/null
runuser -u munge -- /usr/sbin/munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed"
cp "$dir/munge/munged.pid" "$dir/munged.pid"

# Fake GPUs: 22.05's slurmd reports no count for a count-only gpu entry (the node goes INVAL), so
# each GPU is a device file, a copy of /dev/null (char 1:3) in the scratch dir.
mkdir -p "$dir/dev"
for gpu in 0 1; do [ -e "$dir/dev/gpu$gpu" ] || mknod "$dir/dev/gpu$gpu" c 1 3; done

# The host's end: a bridge with the controller's address; each node a veth pair into it.
ip link add "$bridge" type bridge
ip addr add "$net.1/24" dev "$bridge"
ip link set "$bridge" up
node_lines=""
gres_lines=""
names=""
i=1
while [ "$i" -le "$nodes" ]; do
  name="${tag}n$i"
  addr="$net.$((10 + i))"
  ip netns add "$name"
  ip link add "${tag}h$i" type veth peer name "${tag}c$i"
  ip link set "${tag}h$i" master "$bridge" up
  ip link set "${tag}c$i" netns "$name"
  ip -n "$name" addr add "$addr/24" dev "${tag}c$i"
  ip -n "$name" link set "${tag}c$i" up
  ip -n "$name" link set lo up
  gres=""
  if [ "$i" -gt $((nodes - gpu_nodes)) ]; then
    gres=" Gres=gpu:2"
    gres_lines="${gres_lines}NodeName=$name Name=gpu File=$dir/dev/gpu[0-1]
"
  fi
  node_lines="${node_lines}NodeName=$name NodeAddr=$addr CPUs=2 RealMemory=2048$gres State=UNKNOWN
"
  names="${names:+$names,}$name"
  mkdir -p "$dir/spool/$name"
  i=$((i + 1))
done
echo "NODE_NAMES=$names" >> "$dir/cluster.env"

# Small timeouts so a dead node is noticed in seconds: slurmctld pings every SlurmdTimeout/3 s and
# takes a node that did not answer for SlurmdTimeout s for DOWN (its jobs NODE_FAIL, or requeued
# where the job or JobRequeue asks it).
cat > "$dir/slurm.conf" <<CONF
ClusterName=$tag
SlurmctldHost=$(hostname -s)($net.1)
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
SlurmdTimeout=${SLURMD_TIMEOUT:-6}
ResumeTimeout=10
MessageTimeout=3
JobRequeue=${JOB_REQUEUE:-0}
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SlurmdParameters=config_overrides
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmctldPort=${SLURMCTLD_PORT:-7200}
SlurmdPort=${SLURMD_PORT:-7201}
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.log
GresTypes=gpu
${node_lines}PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
printf %s "$gres_lines" > "$dir/gres.conf"
export SLURM_CONF="$dir/slurm.conf"
/usr/sbin/slurmctld -f "$SLURM_CONF"
for name in $(echo "$names" | tr , ' '); do
  # nsenter joins only the network namespace (ip netns exec would remount /sys, hiding the cgroup tree slurmd reads).
  SLURM_CONF="$SLURM_CONF" nsenter --net="/run/netns/$name" /usr/sbin/slurmd -f "$SLURM_CONF" -N "$name"
done
# Ready when every node answers idle.
i=0
until [ "$(sinfo -h -N -t idle -o '%N' 2>/dev/null | sort -u | wc -l)" -eq "$nodes" ]; do
  i=$((i + 1))
  [ $i -lt 150 ] || { echo "slurm-cluster-up: not all $nodes nodes became idle within 30 s (see $dir/log)" >&2; sinfo -N >&2 || true; exit 4; }
  sleep 0.2
done
echo "SLURM_CONF=$SLURM_CONF"
echo "NODE_NAMES=$names"
