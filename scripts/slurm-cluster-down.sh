#!/bin/sh
# Undoes what slurm-cluster-up.sh <scratch-dir> made: stops every process left in each node's
# namespace (slurmd, slurmstepd and the jobs they ran, all started there by the cluster), then
# slurmctld and munged by the pids they recorded, and deletes the namespaces, the veth pairs and the
# bridge by the names written in <scratch-dir>/cluster.env. Safe to run twice or after a failed up.
dir=$1
[ -f "$dir/cluster.env" ] || exit 0
. "$dir/cluster.env"
stop() { # pid...: TERM, up to 5 s, then KILL (sh has no locals: its counter is its own name)
  [ $# -gt 0 ] || return 0
  kill "$@" 2>/dev/null
  waited=0
  while [ $waited -lt 50 ]; do
    alive=0
    for pid in "$@"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ $alive = 1 ] || return 0
    sleep 0.1
    waited=$((waited + 1))
  done
  kill -9 "$@" 2>/dev/null || true
}
i=1
while [ "$i" -le "${NODES:-0}" ]; do
  ns="${TAG}n$i"
  if ip netns list | grep -qw "$ns"; then
    # shellcheck disable=SC2046
    stop $(ip netns pids "$ns")
    ip netns del "$ns"
  fi
  ip link del "${TAG}h$i" 2>/dev/null || true
  i=$((i + 1))
done
for name in slurmctld munged; do
  pid=$(cat "$dir/$name.pid" 2>/dev/null) || continue
  stop "$pid"
done
ip link del "$BRIDGE" 2>/dev/null || true
exit 0
