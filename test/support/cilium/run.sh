#!/bin/sh
# Runs cilium-ref (BINARY, then its own arguments) so that Cilium's real BPF maps can be used
# without touching the host: as root, inside a private mount namespace (own bpffs on
# /sys/fs/bpf, with tc/globals, gone when the namespace goes) and a private network namespace
# (nothing reaches a host interface; the health-check server's loopback listener stays in
# it). Afterwards checks that no pin is left in that bpffs and that no BPF map or program made during
# the run is still alive, and says so on stderr. Not root: runs with Cilium's in-memory maps.
set -eu
bin=$1
shift
if [ "$(id -u)" != 0 ]; then
  echo "run.sh: not root: in-memory fake maps instead of BPF maps" >&2
  exec "$bin" --maps=fake "$@"
fi
CILIUM_REF_OUTER_MNTNS=$(readlink /proc/self/ns/mnt)
export CILIUM_REF_OUTER_MNTNS
exec unshare --mount --net --propagation private sh -eu -c '
  bin=$1; shift
  mount -t bpf bpffs /sys/fs/bpf
  mkdir -p /sys/fs/bpf/tc/globals
  ip link set lo up
  before=$(mktemp)
  "$bin" --bpf-ids | sort >"$before"
  rc=0
  "$bin" --maps=real "$@" || rc=$?
  # (maps.debug and progs.debug are bpf_preload iterators that the kernel adds to every bpffs)
  left=$(find /sys/fs/bpf -mindepth 1 ! -path /sys/fs/bpf/tc ! -path /sys/fs/bpf/tc/globals \
    ! -name maps.debug ! -name progs.debug)
  [ -z "$left" ] || printf "%s\n" "$left" >&2
  pins=$(printf "%s" "$left" | grep -c . || true)
  umount /sys/fs/bpf
  # maps alive now that were not before (the kernel frees closed maps a moment later)
  for i in 1 2 3 4 5 6 7 8 9 10; do
    new=$("$bin" --bpf-ids | sort | comm -13 "$before" - | wc -l)
    [ "$new" = 0 ] && break
    sleep 0.2
  done
  rm -f "$before"
  echo "run.sh: pins left in the private bpffs: $pins; BPF maps/programs alive that were not before the run: $new" >&2
  [ "$pins" = 0 ] && [ "$new" = 0 ] || exit 3
  exit $rc
' sh "$bin" "$@"
