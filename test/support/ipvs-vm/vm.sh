#!/usr/bin/env bash
# A throwaway VM with a real kernel that has IPVS (Debian's 6.1, ip_vs as modules), for what this
# machine's kernel cannot do: boots an initramfs of busybox, ipvsadm, ipset, iproute2 and iptables
# (all from Debian's packages), runs one script inside as root, copies back what it wrote, powers
# off. Nothing of the host is changed: the guest has no network unless --net, and then only
# qemu's user networking (the host reached as 10.0.2.2, or as HOST of --net=CIDR,HOST,GUEST: the
# loopback of the network namespace qemu runs in, where the guest's connections are made).
#
#   vm.sh [--net[=CIDR,HOST,GUEST]] [--add SRC:DEST]... [--modules 'mod ...'] SCRIPT [OUT_DIR]
#
# SCRIPT runs with `bash` in the guest, in /share/out (copied to OUT_DIR afterwards, if given);
# its stdout and stderr come back on ours, its exit code is ours. --add puts a host file into the
# initramfs (a static binary, say) at DEST. Cache: $KDEBUG_IPVS_VM_CACHE, else
# ~/.cache/kdebug-ipvs-vm (the .debs, their extracted tree, the initramfs).
set -euo pipefail

CACHE=${KDEBUG_IPVS_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kdebug-ipvs-vm}
# the Debian release the packages come from is the host's (bookworm): apt downloads them
KERNEL_META=linux-image-amd64
PACKAGES=(busybox-static bash ipvsadm ipset iproute2 iptables netbase)
# what those need at run time (their Depends: that are libraries), resolved again below with ld.so
LIBRARIES=(libc6 libtinfo6 libpopt0 libnl-3-200 libnl-genl-3-200 libipset13 libmnl0 libxtables12
  libip4tc2 libip6tc2 libnftnl11 libnetfilter-conntrack3 libnfnetlink0 libelf1 libbpf1 libcap2
  libbsd0 libmd0 libselinux1 libpcre2-8-0 libzstd1 zlib1g)
# modules loaded at boot (with what they depend on); the rest of netfilter's are there for modprobe.
# crc32c_generic first: libcrc32c (conntrack's) asks the crypto API for it, a soft dependency
MODULES="crc32c_generic virtio_pci 9pnet_virtio 9p ip_vs ip_vs_rr ip_vs_wrr ip_vs_sh ip_vs_lc ip_vs_wlc nf_conntrack
  ip_set ip_set_hash_ip ip_set_hash_ipport ip_set_hash_ipportip ip_set_hash_ipportnet ip_set_hash_net
  ip_set_bitmap_port veth"
# in the initramfs for modprobe on demand, not loaded at boot (dummy would make a dummy0)
ON_DEMAND="dummy"
NET=0
NETSPEC=10.0.2.0/24,10.0.2.2,10.0.2.15
ADD=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --net) NET=1; MODULES+=" virtio_net"; shift ;;
    --net=*) NET=1; MODULES+=" virtio_net"; NETSPEC=${1#--net=}; shift ;;
    --add) ADD+=("$2"); shift 2 ;;
    --modules) MODULES+=" $2"; shift 2 ;;
    -*) echo "vm.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[[ $# -ge 1 ]] || { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
IFS=, read -r NET_CIDR NET_HOST NET_GUEST <<<"$NETSPEC"
SCRIPT=$(realpath "$1")
OUT_DIR=${2:-}

log() { echo "vm.sh: $*" >&2; }

# apt's words where it could not reach its mirrors (no network, no DNS): kept in a file, and one
# line says what to download by hand, and where, for the next run to find them
APT_LOG=$CACHE/apt.log
unfetched() {
  log "apt-get could not download the guest's packages (no network or DNS? apt's words: $APT_LOG): download $* with \`apt-get download\` on a Debian $(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}") amd64 machine that has network, put the .debs in $CACHE/debs, then run again"
  exit 1
}
# apt's own lines of a fetch that failed (apt-get update exits 0 where its mirrors are unreachable)
fetchFailed() { grep -qE '^(Err|E):|Failed to fetch' "$APT_LOG"; }

# (a) the packages: downloaded once, extracted into one tree
fetch() {
  mkdir -p "$CACHE/debs"
  if ! command -v qemu-system-x86_64 >/dev/null; then
    log "installing qemu-system-x86"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-system-x86 >"$APT_LOG" 2>&1 ||
      { log "qemu-system-x86_64 is not installed, and apt-get could not install qemu-system-x86 (no network or DNS? apt's words: $APT_LOG): install it, then run again"; exit 1; }
  fi
  local kernel
  kernel=$(apt-cache depends "$KERNEL_META" 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
  # a fresh machine has no package lists yet: read them once
  if [[ -z $kernel ]]; then
    log "no package lists: apt-get update"
    { apt-get update -qq >"$APT_LOG" 2>&1 && ! fetchFailed; } ||
      unfetched "$KERNEL_META's kernel (linux-image-VERSION-amd64)" "${PACKAGES[@]}" "${LIBRARIES[@]}"
    kernel=$(apt-cache depends "$KERNEL_META" | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
  fi
  [[ -n $kernel ]] || { log "no kernel package behind $KERNEL_META"; exit 1; }
  local want=("$kernel" "${PACKAGES[@]}" "${LIBRARIES[@]}") p
  missing() { for p in "${want[@]}"; do compgen -G "$CACHE/debs/${p}_*.deb" >/dev/null || echo "$p"; done; }
  local lacking
  lacking=$(missing)
  if [[ -n $lacking ]]; then
    log "downloading $(echo $lacking)"
    # shellcheck disable=SC2046 # one package name a word
    (cd "$CACHE/debs" && apt-get download $lacking) >"$APT_LOG" 2>&1 || unfetched $(missing)
    grep -v '^W: Download is performed unsandboxed' "$APT_LOG" >&2 || true
  fi
  # extracted again whenever the set of .debs changes
  local debs
  debs=$(for p in "${want[@]}"; do ls "$CACHE"/debs/"${p}"_*.deb | tail -1; done)
  if [[ $(cat "$CACHE/root/.debs" 2>/dev/null) != "$debs" ]]; then
    rm -rf "$CACHE/root" && mkdir -p "$CACHE/root"
    while read -r p; do dpkg-deb -x "$p" "$CACHE/root"; done <<<"$debs"
    echo "$debs" >"$CACHE/root/.debs"
  fi
  KVER=${kernel#linux-image-}
}

# (b) the initramfs: busybox as init, the tools with the libraries ld.so says they load, the
# modules named above with their dependencies (modules.dep by busybox's depmod)
build() {
  local R=$CACHE/root I=$CACHE/initramfs.d
  rm -rf "$I" && mkdir -p "$I"/{bin,sbin,usr/bin,usr/sbin,lib64,proc,sys,dev,tmp,run,share,etc}
  cp "$R/bin/busybox" "$I/bin/busybox"
  for app in $("$I/bin/busybox" --list); do [[ -e $I/bin/$app ]] || ln -s busybox "$I/bin/$app"; done
  local tools=(bin/bash sbin/ipvsadm sbin/ipvsadm-save sbin/ipvsadm-restore usr/sbin/ipset bin/ip
    usr/sbin/xtables-nft-multi usr/sbin/xtables-legacy-multi) t
  for t in "${tools[@]}"; do rm -f "$I/$t"; cp -a "$R/$t" "$I/$t"; done
  rm -f "$I/sbin/ip" && ln -s /bin/ip "$I/sbin/ip"
  # the packages' own links (iptables-nft, iptables-legacy-save ...), and Debian's alternatives,
  # which a postinst sets: iptables is the nft backend
  cp -a "$R"/usr/sbin/*tables-{nft,legacy}* "$I/usr/sbin/"
  for t in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
    ln -sf xtables-nft-multi "$I/usr/sbin/$t"
  done
  cp -a "$R"/usr/lib/x86_64-linux-gnu/xtables "$I/xtables.tmp" && mkdir -p "$I/usr/lib/x86_64-linux-gnu" &&
    mv "$I/xtables.tmp" "$I/usr/lib/x86_64-linux-gnu/xtables"
  local ldpath=$R/lib/x86_64-linux-gnu:$R/usr/lib/x86_64-linux-gnu lib
  cp "$R/lib64/ld-linux-x86-64.so.2" "$I/lib64/"
  for t in "${tools[@]}" usr/lib/x86_64-linux-gnu/xtables/*.so; do
    [[ $(head -c4 "$R/$t" 2>/dev/null) == $'\x7fELF' ]] || continue
    "$R/lib64/ld-linux-x86-64.so.2" --library-path "$ldpath" --list "$R/$t" |
      awk '/=> \// {print $3}' | while read -r lib; do
        [[ $lib == "$R"/* ]] || { log "$t needs $lib, not from the packages"; exit 1; }
        mkdir -p "$I/$(dirname "${lib#"$R"/}")"
        cp -L "$lib" "$I/${lib#"$R"/}"
      done
  done
  local M=lib/modules/$KVER
  [[ -f $R/$M/modules.dep ]] || "$R/bin/busybox" depmod -b "$R" "$KVER"
  mkdir -p "$I/$M"
  {
    for m in $MODULES $ON_DEMAND; do echo "$m"; done
    # every netfilter module, for what iptables and kube-proxy load on demand
    (cd "$R/$M" && find kernel/net/netfilter kernel/net/ipv4/netfilter kernel/net/ipv6/netfilter \
      kernel/net/bridge -name '*.ko' | sed 's#.*/##; s#\.ko$##')
  } | tr - _ | sort -u >"$CACHE/modules.want"
  # each wanted module's file and the files it depends on (module names: "-" and "_" alike)
  awk -F': *' 'NR==FNR {want[$1]; next}
    {n=$1; sub(/.*\//,"",n); sub(/\.ko$/,"",n); gsub(/-/,"_",n)}
    n in want {print $1; if ($2!="") print $2}' "$CACHE/modules.want" "$R/$M/modules.dep" |
    tr ' ' '\n' | sort -u | while read -r ko; do
    [[ -n $ko ]] || continue
    mkdir -p "$I/$M/$(dirname "$ko")" && cp "$R/$M/$ko" "$I/$M/$ko"
  done
  cp "$R/$M"/modules.{builtin,order} "$I/$M/"
  "$I/bin/busybox" depmod -b "$I" "$KVER"
  local a
  for a in "${ADD[@]}"; do mkdir -p "$I/$(dirname "${a#*:}")" && cp "${a%%:*}" "$I/${a#*:}"; done
  cp "$R"/etc/{services,protocols} "$I/etc/" # port and protocol names (ipvsadm -L)
  printf 'root:x:0:0:root:/root:/bin/sh\n' >"$I/etc/passwd"
  printf 'root:x:0:\n' >"$I/etc/group"
  printf '127.0.0.1 localhost\n::1 localhost\n' >"$I/etc/hosts"
  printf 'hosts: files\n' >"$I/etc/nsswitch.conf"
  # no dummy0 made when the module loads: kube-ipvs0 is the node's only dummy
  mkdir -p "$I/etc/modprobe.d" && echo 'options dummy numdummies=0' >"$I/etc/modprobe.d/dummy.conf"
  cat >"$I/init" <<EOF
#!/bin/sh
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp; mount -t tmpfs run /run
echo /bin/modprobe >/proc/sys/kernel/modprobe # what the kernel runs for a module on demand
for m in $(echo $MODULES); do modprobe \$m || echo "init: modprobe \$m failed"; done
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 share /share
ip link set lo up
if [ $NET = 1 ]; then
  ip link set eth0 up && ip addr add $NET_GUEST/${NET_CIDR#*/} dev eth0 && ip route add default via $NET_HOST
fi
cut -d' ' -f1 /proc/uptime >/share/booted
cd /share/out && bash /share/script.sh >/share/stdout 2>/share/stderr
echo \$? >/share/rc
cd /
cut -d' ' -f1 /proc/uptime >/share/finished
sync; umount /share
poweroff -f
EOF
  chmod +x "$I/init"
  (cd "$I" && find . | sort | "$R/bin/busybox" cpio -o -H newc 2>/dev/null) | gzip -1 >"$CACHE/initramfs.gz"
  KERNEL=$CACHE/vmlinux-$KVER
  [[ -s $KERNEL ]] || vmlinux "$R/boot/vmlinuz-$KVER" >"$KERNEL"
}

# The kernel's ELF out of its bzImage (as the kernel's scripts/extract-vmlinux finds it): qemu
# boots it directly (PVH), skipping the decompressor, seconds under emulation
vmlinux() {
  local pos
  for pos in $(tr '\3757zXZ\000\nabcde' '\nabcde=' <"$1" | grep -abo '^abcde' | cut -d: -f1); do
    tail -c +"$pos" "$1" | xz -dc 2>/dev/null >"$CACHE/vmlinux.tmp" || true
    [[ $(head -c4 "$CACHE/vmlinux.tmp") == $'\x7fELF' ]] && { cat "$CACHE/vmlinux.tmp"; rm "$CACHE/vmlinux.tmp"; return; }
  done
  log "no xz-compressed ELF in $1"; exit 1
}

# KVM where it runs an ordinary kernel; a /dev/kvm of PVM (a nested, paravirtual KVM: a sandbox's
# kernel built as a PVM guest offers it) runs only PVM guest kernels, and Debian's hangs once
# decompressed: there, qemu's own emulation (TCG), slower but any kernel boots
accel() {
  case ${KDEBUG_IPVS_VM_ACCEL:-auto} in
    kvm) ACCEL=(-enable-kvm) ;;
    tcg) ACCEL=(-accel tcg) ;;
    auto) if [[ -w /dev/kvm && ! -d /sys/module/kvm_pvm ]]; then ACCEL=(-enable-kvm); else ACCEL=(-accel tcg); fi ;;
  esac
}

# (c) boot it, run SCRIPT, power off
boot() {
  local run
  run=$(mktemp -d "$CACHE/run.XXXXXX")
  mkdir "$run/out" && cp "$SCRIPT" "$run/script.sh"
  local nic=(-nic none)
  # no option ROM: the NIC's iPXE only slows the boot
  [[ $NET = 1 ]] && nic=(-netdev "user,id=net0,net=$NET_CIDR,host=$NET_HOST"
    -device virtio-net-pci,netdev=net0,romfile=)
  local t0 t1
  t0=$(date +%s.%N)
  timeout "${KDEBUG_IPVS_VM_TIMEOUT:-600}" qemu-system-x86_64 "${ACCEL[@]}" -smp 1 -m "${KDEBUG_IPVS_VM_MEMORY:-512}" \
    -nographic -no-reboot -kernel "$KERNEL" -initrd "$CACHE/initramfs.gz" \
    -append 'console=ttyS0 quiet panic=-1 rdinit=/init' "${nic[@]}" \
    -virtfs "local,path=$run,mount_tag=share,security_model=none,id=share" \
    </dev/null >"$run/console" 2>&1 || { log "qemu failed: $?"; cat "$run/console" >&2; }
  t1=$(date +%s.%N)
  if [[ ! -f $run/rc ]]; then
    log "the script did not finish (kept: $run); the console:"; cat "$run/console" >&2; exit 1
  fi
  cat "$run/stdout"; cat "$run/stderr" >&2
  # the console, less the firmware's screen and the kernel's own lines: what init said
  tr -d '\033' <"$run/console" | grep -av -e '^\s*$' -e 'SeaBIOS' -e 'Booting from' -e '^\[' >&2 || true
  log "$(awk -v t0="$t0" -v t1="$t1" -v b="$(cat "$run/booted")" -v f="$(cat "$run/finished")" \
    'BEGIN {printf "kernel %s ('"${ACCEL[*]}"'): booted in %.2fs (guest uptime), script %.2fs, qemu wall %.2fs", "'"$KVER"'", b, f-b, t1-t0}')"
  if [[ -n $OUT_DIR ]]; then mkdir -p "$OUT_DIR" && cp -r "$run/out/." "$OUT_DIR/"; fi
  local rc
  rc=$(cat "$run/rc")
  rm -rf "$run"
  return "$rc"
}

fetch
build
accel
boot
