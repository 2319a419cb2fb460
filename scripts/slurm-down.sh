#!/bin/sh
# Stops what slurm-up.sh <scratch-dir> started, by the pids it recorded, and waits until they are gone.
dir=$1
for name in slurmrestd slurmd slurmctld munged; do
  pid=$(cat "$dir/$name.pid" 2>/dev/null) || continue
  kill "$pid" 2>/dev/null || continue
  i=0
  while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
  kill -9 "$pid" 2>/dev/null || true
done
