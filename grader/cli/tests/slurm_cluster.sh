# shellcheck shell=bash
# A one-node Slurm cluster in a folder of its own, for the tests of `convlab grade --slurm`
# (sourced by e2e_slurm.sh and gpu-slurm-check.sh; it needs root, as munged and slurmd do):
#
#   slurm_cluster_start DIR [--accounting] [--gpus]   munged, [MariaDB and slurmdbd,] slurmctld, slurmd
#   slurm_cluster_stop                                cancels every job, then stops what start started
#
# Everything lives in DIR: configuration, keys, state, logs (DIR/log/); the Unix sockets, pid
# files and slurmd's spool (slurmstepd's sockets) live in a short private folder under /tmp,
# linked as DIR/run and DIR/spool: a socket's path may not pass 108 bytes, and DIR may sit as
# deep as a checkout's build folder does (munged refused one of 122 bytes). The daemons
# listen on free ports found here, so that the cluster never meets another Slurm of the machine.
# After start, SLURM_CONF points at DIR/etc/slurm.conf and sbatch, sacct, squeue... are on PATH.
#
# --accounting adds slurmdbd on a MariaDB of its own (sacct works; without it Slurm keeps no
# record of ended jobs and `convlab grade --slurm` falls back on squeue). --gpus declares the
# machine's /dev/nvidiaN as a gres (GresTypes=gpu, Gres=gpu:N, gres.conf with File=).
#
# Binaries come from PATH (Debian: apt-get install slurm-wlm munge [slurmdbd mariadb-server]), or,
# with SLURM_PREFIX set, from Debian packages unpacked there with `dpkg -x` (gpu-slurm-check.sh):
# the daemons then run with LD_LIBRARY_PATH set to the prefix's libraries, and the commands through
# small wrappers in DIR/bin that give the libraries to the loader without exporting LD_LIBRARY_PATH
# (sbatch hands its environment to the job, and convlab's build must not load Debian's libraries).
#
# The configuration is the least that works in a container run as root: no cgroups
# (ProctrackType=proctrack/linuxproc, TaskPlugin=task/none), CPU cores as the only resource;
# jobacct_gather/linux reads /proc, so that sacct reports each job's CPU time.

_sc_pids=()      # what slurm_cluster_stop stops, in reverse order: "name:pid"
_sc_dir=""
_sc_short=""     # the short folder of sockets, pid files and slurmd's spool (removed by stop)

_sc_log() { echo "slurm cluster: $*"; }

_sc_fail() {  # print the logs that say why, and fail
  _sc_log "FAILED: $*"
  local f
  for f in "$_sc_dir"/log/*; do
    [ -f "$f" ] && { echo "---- $f (last 15 lines)"; tail -15 "$f"; }
  done
  return 1
}

_sc_free_port() {  # a port nothing listens on, from $1 up
  local p=$1
  while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
  echo "$p"
}

_sc_wait() {  # _sc_wait SECONDS DESCRIPTION COMMAND...: until COMMAND succeeds
  local until=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $until ] || { _sc_fail "$what did not happen within the time limit"; return 1; }
    sleep 0.5
  done
}

_sc_pid_alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

_sc_remember() {  # _sc_remember NAME PIDFILE: record the daemon that wrote PIDFILE
  local pid
  pid=$(cat "$2" 2>/dev/null) || true
  [ -n "$pid" ] && _sc_pids+=("$1:$pid")
}

# Where a program is: the prefix's copy if SLURM_PREFIX is set, else PATH's. Debian installs
# the daemons as NAME-wlm and links NAME to them in a maintainer script (update-alternatives),
# which dpkg -x does not run: the link is made here. The name matters, not only the file: Slurm
# tells which daemon it runs in by its program name, and a slurmd started as "slurmd-wlm" reads
# its node's Gres= from slurm.conf as none ("A line in gres.conf for GRES gpu has 1 more
# configured than expected"), registers no GPU, and every job asking for one is refused
# ("Requested node configuration is not available"; seen on the H100).
_sc_bin() {
  local name=$1 d
  if [ -n "${SLURM_PREFIX:-}" ]; then
    for d in usr/sbin usr/bin sbin bin; do
      [ -x "$SLURM_PREFIX/$d/$name" ] && { echo "$SLURM_PREFIX/$d/$name"; return 0; }
    done
    for d in usr/sbin usr/bin sbin bin; do
      if [ -x "$SLURM_PREFIX/$d/$name-wlm" ]; then
        ln -sfn "$name-wlm" "$SLURM_PREFIX/$d/$name" || return 1
        echo "$SLURM_PREFIX/$d/$name"
        return 0
      fi
    done
    return 1
  fi
  command -v "$name"
}

# Runs a daemon: with the prefix's libraries when there is one.
_sc_daemon() {
  if [ -n "${SLURM_PREFIX:-}" ]; then
    env LD_LIBRARY_PATH="$_sc_libs" "$@"
  else
    "$@"
  fi
}

slurm_cluster_start() {
  local dir=$1 accounting=0 gpus=0
  shift
  while [ $# -gt 0 ]; do
    case $1 in
      --accounting) accounting=1 ;;
      --gpus) gpus=1 ;;
      *) _sc_log "unknown option $1"; return 1 ;;
    esac
    shift
  done
  _sc_dir=$dir
  rm -rf "$dir"
  mkdir -p "$dir"/{etc,log,state,bin}
  chmod 755 "$dir"
  # Sockets in a short folder whatever DIR's depth (sun_path holds 108 bytes).
  _sc_short=$(mktemp -d "${TMPDIR:-/tmp}/slurm.XXXXXX") || { _sc_fail "mktemp"; return 1; }
  if [ ${#_sc_short} -gt 40 ]; then
    rm -rf "$_sc_short"
    _sc_short=$(mktemp -d /tmp/slurm.XXXXXX) || { _sc_fail "mktemp"; return 1; }
  fi
  chmod 755 "$_sc_short"
  mkdir -p "$_sc_short"/{run,spool}
  ln -s "$_sc_short/run" "$dir/run"
  ln -s "$_sc_short/spool" "$dir/spool"
  local run=$_sc_short/run

  local plugins=/usr/lib/x86_64-linux-gnu/slurm-wlm stepd="" prog
  if [ -n "${SLURM_PREFIX:-}" ]; then
    local arch=x86_64-linux-gnu
    _sc_libs="$SLURM_PREFIX/usr/lib/$arch/slurm-wlm:$SLURM_PREFIX/usr/lib/$arch:$SLURM_PREFIX/lib/$arch"
    plugins=$SLURM_PREFIX/usr/lib/$arch/slurm-wlm
    stepd=$(_sc_bin slurmstepd) || { _sc_fail "no slurmstepd in $SLURM_PREFIX"; return 1; }
    local loader=/lib64/ld-linux-x86-64.so.2
    for prog in sbatch sacct squeue scontrol scancel sinfo sacctmgr; do
      local real
      real=$(_sc_bin "$prog") || { _sc_fail "no $prog in $SLURM_PREFIX"; return 1; }
      printf '#!/bin/sh\nexec %s --library-path %s %s "$@"\n' "$loader" "$_sc_libs" "$real" >"$dir/bin/$prog"
      chmod 755 "$dir/bin/$prog"
    done
    export PATH="$dir/bin:$PATH"
  fi
  for prog in munged mungekey slurmctld slurmd sbatch sacct squeue scontrol sinfo; do
    _sc_bin "$prog" >/dev/null || command -v "$prog" >/dev/null ||
      { _sc_fail "$prog not found (apt-get install slurm-wlm munge)"; return 1; }
  done
  if [ $accounting = 1 ]; then
    for prog in slurmdbd mariadbd mariadb-install-db mariadb sacctmgr; do
      _sc_bin "$prog" >/dev/null ||
        { _sc_fail "$prog not found: --accounting needs slurmdbd and mariadb-server"; return 1; }
    done
  fi

  local host base ctld_port slurmd_port dbd_port db_port
  host=$(hostname -s)
  base=$((20000 + $$ % 20000))
  ctld_port=$(_sc_free_port "$base")
  slurmd_port=$(_sc_free_port $((ctld_port + 1)))
  dbd_port=$(_sc_free_port $((slurmd_port + 1)))
  db_port=$(_sc_free_port $((dbd_port + 1)))

  # munge: its own key and socket.
  _sc_daemon "$(_sc_bin mungekey)" --create --keyfile="$dir/etc/munge.key" || { _sc_fail "mungekey"; return 1; }
  _sc_daemon "$(_sc_bin munged)" --socket="$run/munge.sock" --key-file="$dir/etc/munge.key" \
    --pid-file="$run/munged.pid" --seed-file="$run/munged.seed" --log-file="$dir/log/munged.log" ||
    { _sc_fail "munged did not start"; return 1; }
  _sc_wait 20 "munged's socket" test -S "$run/munge.sock" || return 1
  _sc_remember munged "$run/munged.pid"

  local acct="AccountingStorageType=accounting_storage/none"
  if [ $accounting = 1 ]; then
    _sc_log "starting MariaDB and slurmdbd"
    _sc_daemon "$(_sc_bin mariadb-install-db)" --no-defaults --datadir="$dir/db" --user=root \
      --auth-root-authentication-method=normal --skip-test-db >"$dir/log/mariadb-install.log" 2>&1 ||
      { _sc_fail "mariadb-install-db"; return 1; }
    _sc_daemon "$(_sc_bin mariadbd)" --no-defaults --datadir="$dir/db" --user=root --socket="$run/db.sock" \
      --port="$db_port" --bind-address=127.0.0.1 --skip-name-resolve --pid-file="$run/mariadbd.pid" \
      --log-error="$dir/log/mariadbd.log" --innodb-buffer-pool-size=64M >/dev/null 2>&1 &
    _sc_wait 60 "MariaDB's socket" test -S "$run/db.sock" || return 1
    _sc_wait 20 "MariaDB's pid file" test -s "$run/mariadbd.pid" || return 1
    _sc_remember mariadbd "$run/mariadbd.pid"
    _sc_daemon "$(_sc_bin mariadb)" --no-defaults -S "$run/db.sock" -uroot \
      -e "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurm'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" ||
      { _sc_fail "cannot create the database user"; return 1; }
    cat >"$dir/etc/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$run/munge.sock
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$dbd_port
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$db_port
StorageUser=slurm
StoragePass=slurm
StorageLoc=slurm_acct_db
PluginDir=$plugins
PidFile=$run/slurmdbd.pid
LogFile=$dir/log/slurmdbd.log
EOF
    chmod 600 "$dir/etc/slurmdbd.conf"
    # AccountingStoragePass names the munge socket slurmctld and the commands use to reach slurmdbd.
    acct="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$dbd_port
AccountingStoragePass=$run/munge.sock"
  fi

  local gres_node="" gres_types=""
  if [ $gpus = 1 ]; then
    local devices=(/dev/nvidia[0-9]*)
    [ -e "${devices[0]}" ] || { _sc_fail "--gpus: no /dev/nvidiaN on this machine"; return 1; }
    gres_types="GresTypes=gpu"
    gres_node="Gres=gpu:${#devices[@]}"
    : >"$dir/etc/gres.conf"
    local d
    for d in "${devices[@]}"; do echo "NodeName=$host Name=gpu File=$d" >>"$dir/etc/gres.conf"; done
  fi

  # slurmd starts a cgroup plugin whatever else is configured; on a cgroup v2 machine without a
  # systemd bus (a container: the H100's) cgroup/v2 fails ("cannot connect to dbus system
  # daemon ... slurmd initialization failed"). cgroup/v1 on an empty folder of its own starts
  # anywhere, and nothing here uses cgroups (proctrack/linuxproc, task/none).
  mkdir -p "$dir/cgroup"
  cat >"$dir/etc/cgroup.conf" <<EOF
CgroupPlugin=cgroup/v1
CgroupMountpoint=$dir/cgroup
CgroupAutomount=no
EOF

  cat >"$dir/etc/slurm.conf" <<EOF
# A one-node cluster for convlab's tests (grader/cli/tests/slurm_cluster.sh).
ClusterName=convlabtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$run/munge.sock
CredType=cred/munge
PluginDir=$plugins
StateSaveLocation=$dir/state
SlurmdSpoolDir=$_sc_short/spool
SlurmctldPidFile=$run/slurmctld.pid
SlurmdPidFile=$run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
KillWait=10
MinJobAge=300
$acct
$gres_types
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) $gres_node State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$dir/etc/slurm.conf

  if [ $accounting = 1 ]; then
    _sc_daemon "$(_sc_bin slurmdbd)" || { _sc_fail "slurmdbd did not start"; return 1; }
    _sc_wait 60 "slurmdbd's pid file" test -s "$run/slurmdbd.pid" || return 1
    _sc_remember slurmdbd "$run/slurmdbd.pid"
    _sc_wait 60 "registering the cluster with slurmdbd" sacctmgr -i add cluster convlabtest || return 1
  fi
  _sc_daemon "$(_sc_bin slurmctld)" || { _sc_fail "slurmctld did not start"; return 1; }
  _sc_wait 30 "slurmctld's pid file" test -s "$run/slurmctld.pid" || return 1
  _sc_remember slurmctld "$run/slurmctld.pid"
  if [ -n "$stepd" ]; then
    # slurmd starts each job's slurmstepd from a path built in; here it is the prefix's.
    _sc_daemon "$(_sc_bin slurmd)" -d "$stepd" || { _sc_fail "slurmd did not start"; return 1; }
  else
    _sc_daemon "$(_sc_bin slurmd)" || { _sc_fail "slurmd did not start"; return 1; }
  fi
  _sc_wait 30 "slurmd's pid file" test -s "$run/slurmd.pid" || return 1
  _sc_remember slurmd "$run/slurmd.pid"
  _sc_wait 60 "the node coming up idle" sh -c 'sinfo -h -o %T | grep -qx idle' || return 1
  _sc_log "up: $host, $(nproc) CPUs${gres_node:+, $gres_node}, $( [ $accounting = 1 ] && echo "accounting by slurmdbd" || echo "no accounting"), SLURM_CONF=$SLURM_CONF"
}

slurm_cluster_stop() {
  [ -n "$_sc_dir" ] || return 0
  # Jobs first: their processes outlive slurmd otherwise.
  if [ ${#_sc_pids[@]} -gt 0 ] && command -v squeue >/dev/null; then
    local jobs
    jobs=$(squeue -h -o %A 2>/dev/null | sort -u)
    if [ -n "$jobs" ]; then
      # shellcheck disable=SC2086
      scancel $jobs 2>/dev/null
      local until=$((SECONDS + 30))
      while [ -n "$(squeue -h -o %A 2>/dev/null)" ] && [ $SECONDS -lt $until ]; do sleep 1; done
    fi
  fi
  local i entry name pid
  for ((i = ${#_sc_pids[@]} - 1; i >= 0; i--)); do
    entry=${_sc_pids[$i]}
    name=${entry%%:*} pid=${entry#*:}
    _sc_pid_alive "$pid" || continue
    kill -TERM "$pid" 2>/dev/null
    local until=$((SECONDS + 20))
    while _sc_pid_alive "$pid" && [ $SECONDS -lt $until ]; do sleep 0.2; done
    if _sc_pid_alive "$pid"; then
      _sc_log "$name ($pid) did not stop: killing it"
      kill -KILL "$pid" 2>/dev/null
    fi
  done
  _sc_pids=()
  [ -n "$_sc_short" ] && rm -rf "$_sc_short"
  _sc_short=""
  _sc_log "stopped"
  _sc_dir=""
}
