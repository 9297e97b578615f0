#!/bin/sh
# Installs and starts the real engines the engine tests use, on a Debian machine as root (CI: a fresh VM).
# Idempotent: what is installed/running is left alone. Usage: engines.sh bwrap|docker|slurm|cron|reflink|python
# Prints "ready <engine> <seconds>" on success. Daemons started here stay up (pids in /run/subagents-engines/).
set -eu
engine="$1"
state=/run/subagents-engines
mkdir -p "$state"
start=$(date +%s.%N)
log="$state/$engine.log"
# One setup of an engine at a time on this machine (test runs in other checkouts may set up the same engine).
exec 9>"$state/$engine.lock"
flock 9

apt_install() {
  missing=""
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
  [ -z "$missing" ] && return 0
  # One apt-get update per machine, the first time something is missing.
  [ -e "$state/apt-updated" ] || { apt-get -o DPkg::Lock::Timeout=600 update -qq >>"$log" 2>&1; touch "$state/apt-updated"; }
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing >>"$log" 2>&1
}

# Runs a daemon detached from the test runner: its own session, no inherited stdio (nothing may hold the runner).
daemon() {
  name="$1"; shift
  setsid "$@" </dev/null >>"$state/$name.out" 2>&1 &
  echo $! >"$state/$name.pid"
}

case "$engine" in
bwrap)
  apt_install bubblewrap
  bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all --cap-drop ALL true >>"$log" 2>&1 || { echo "bwrap cannot run a sandbox here (see $log)" >&2; exit 1; }
  ;;
docker)
  apt_install docker.io debootstrap
  if ! docker info >/dev/null 2>&1; then
    daemon dockerd dockerd
    i=0; until docker info >/dev/null 2>&1; do i=$((i+1)); [ $i -gt 600 ] && { echo "dockerd did not start (see $state/dockerd.out)" >&2; exit 1; }; sleep 0.2; done
  fi
  if ! docker image inspect subagents-test/base >/dev/null 2>&1; then
    root=/var/cache/subagents-engines/rootfs
    [ -x "$root/bin/sh" ] || { rm -rf "$root"; debootstrap --variant=minbase bookworm "$root" >>"$log" 2>&1; }
    tar -C "$root" -c . | docker import - subagents-test/base >>"$log" 2>&1
  fi
  # Ready means a container has really run.
  i=0; until timeout 60 docker run --rm --network none subagents-test/base true >>"$log" 2>&1; do i=$((i+1)); [ $i -gt 30 ] && { echo "docker runs no container (see $log)" >&2; exit 1; }; sleep 1; done
  ;;
slurm)
  apt_install slurm-wlm munge
  host=$(hostname -s)
  conf=/etc/slurm/slurm.conf
  if [ ! -e "$conf" ]; then
    mem=$(awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo)
    mkdir -p /var/lib/slurm/slurmd /var/lib/slurm/slurmctld /var/log/slurm
    chown -R slurm:slurm /var/lib/slurm /var/log/slurm 2>/dev/null || true
    cat >"$conf" <<CONF
ClusterName=local
SlurmctldHost=$host
AuthType=auth/munge
SlurmUser=slurm
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SlurmdSpoolDir=/var/lib/slurm/slurmd
StateSaveLocation=/var/lib/slurm/slurmctld
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=$host CPUs=$(nproc) RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:16
CONF
  fi
  if ! pgrep -x munged >/dev/null; then
    mkdir -p /run/munge && chown munge:munge /run/munge
    [ -s /etc/munge/munge.key ] || { mungekey -c >>"$log" 2>&1 || true; chown munge:munge /etc/munge/munge.key; }
    runuser -u munge -- /usr/sbin/munged >>"$log" 2>&1
  fi
  pgrep -x slurmctld >/dev/null || daemon slurmctld slurmctld -D
  pgrep -x slurmd >/dev/null || daemon slurmd slurmd -D
  i=0; until sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; do i=$((i+1)); [ $i -gt 600 ] && { echo "slurm did not come up (see $state/)" >&2; exit 1; }; sleep 0.2; done
  # A node that looks idle may still refuse steps for a moment (controller and node registering): ready means a
  # real job step has run.
  i=0; until timeout 30 srun --quiet true >>"$log" 2>&1; do i=$((i+1)); [ $i -gt 60 ] && { echo "slurm runs no job step (see $log)" >&2; exit 1; }; sleep 1; done
  ;;
python)
  # Debian's python3 with venv (and its bundled pip): the real projects' venv (test/support/real-projects.ts).
  apt_install python3 python3-venv
  /usr/bin/python3 -m venv --help >/dev/null 2>&1 || { echo "python3 -m venv does not run (see $log)" >&2; exit 1; }
  ;;
cron)
  apt_install cron
  # No systemd here: the daemon is started by hand (it forks into the background itself). Ready when it runs.
  if ! pgrep -x cron >/dev/null; then
    cron >>"$log" 2>&1 || { echo "cron did not start (see $log)" >&2; exit 1; }
  fi
  i=0; until pgrep -x cron >/dev/null; do i=$((i+1)); [ $i -gt 100 ] && { echo "cron is not running (see $log)" >&2; exit 1; }; sleep 0.1; done
  command -v crontab >/dev/null || { echo "no crontab command after installing cron" >&2; exit 1; }
  ;;
reflink)
  # A filesystem with copy-on-write clones (xfs with reflink=1) in a loop-mounted image: the machine's own root is
  # ext4, which has none. Mounted at /run/subagents-engines/reflink, the image in /var/cache (sparse, 2 GiB).
  apt_install xfsprogs
  img=/var/cache/subagents-engines/reflink.img
  mnt="$state/reflink"
  mkdir -p /var/cache/subagents-engines "$mnt"
  if ! mountpoint -q "$mnt"; then
    [ -s "$img" ] || { truncate -s 2G "$img" && mkfs.xfs -q -f -m reflink=1 "$img" >>"$log" 2>&1; }
    mount -o loop "$img" "$mnt" >>"$log" 2>&1 || { echo "could not mount $img (see $log)" >&2; exit 1; }
    chmod 1777 "$mnt"
  fi
  echo probe >"$mnt/.probe" && cp --reflink=always "$mnt/.probe" "$mnt/.probe-clone" >>"$log" 2>&1 || { echo "no reflinks on $mnt (see $log)" >&2; exit 1; }
  rm -f "$mnt/.probe" "$mnt/.probe-clone"
  ;;
*) echo "unknown engine $engine" >&2; exit 2 ;;
esac
end=$(date +%s.%N)
echo "ready $engine $(echo "$end - $start" | bc 2>/dev/null || awk "BEGIN{print $end-$start}")"
