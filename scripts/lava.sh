#!/usr/bin/env bash
# "make lava": a LAVA test pack of the series, for labs that run the
# workbench's boots on real arm64 hardware (Documentation/lava.md).
# Writes $LAVA_OUT (default build/lava):
#   series/Image, series/<lane>.cpio.gz   the kernel make builds and, per
#       lane (main, and each line of selftests/variants.txt), the L1
#       initramfs of that boot: its kernel parameters, TESTS and overrides
#   stock/Image                            with LAVA_STOCK_IMAGE=<Image>
#       (a stock kernel, for the comparison; the initramfs are the same)
#   devices/qemu-<lane>.yaml               lava-run device files: the
#       lane's QEMU machine, as scripts/boot.sh runs it
#   jobs/qemu-<lane>[-stock].yaml          LAVA jobs for the qemu device type
#   templates/board-{uboot,grub}-<lane>.yaml  jobs for a real board: deploy
#       over TFTP with a ramdisk root, boot by U-Boot or GRUB; the device
#       type and the URLs are the only parameters (@DEVICE_TYPE@,
#       @KERNEL_URL@, @RAMDISK_URL@, and @DTB_URL@ for U-Boot), which
#       scripts/lava-render.sh fills in
#   kvm.plan, skiplist.txt, variants.txt   what the initramfs run
#
#   LAVA_OUT=<dir>       where (default build/lava; emptied first)
#   LAVA_URL=<url>       where a lab will fetch the pack from (default
#                        file://<LAVA_OUT>, for lava-run on this machine)
#   LAVA_LANES="..."     lanes (default: main and every variant)
#   LAVA_TESTS=<globs>   TESTS for every lane (default: each lane's own);
#   LAVA_TESTS_<LANE>    for one lane (upper case, - as _)
#   LAVA_STAGES="..."    the guest stages (default: those of make's boots)
#   LAVA_STOCK_IMAGE     a stock kernel Image: adds jobs/qemu-<lane>-stock.yaml
#   LAVA_APPEND_<LANE>   extra kernel parameters of one lane (upper case,
#                        - as _), e.g. a fault to inject
#   LAVA_TIMEOUT         minutes a job's test action may take (default 60)
stage=lava
. "$(dirname "$0")/lib.sh"
need_cmd sed awk

OUT=$(realpath -m "${LAVA_OUT:-$TOP/build/lava}")
URL=${LAVA_URL:-file://$OUT}
IMAGE=${IMAGE:-$KERNEL_O/arch/arm64/boot/Image}
TMO=${LAVA_TIMEOUT:-60}
case $TMO in '' | *[!0-9]* | 0) die $E_USAGE "LAVA_TIMEOUT='$TMO' is not a number of minutes" ;; esac
[ -f "$IMAGE" ] || die $E_USAGE "no kernel Image at $IMAGE: run 'make build' first"
[ -z "${LAVA_STOCK_IMAGE:-}" ] || [ -f "$LAVA_STOCK_IMAGE" ] ||
	die $E_USAGE "LAVA_STOCK_IMAGE='$LAVA_STOCK_IMAGE' is not a file"
[[ $URL =~ ^(file|https?)://[^[:space:]]+$ ]] || die $E_USAGE "LAVA_URL='$URL' is not a file://, http:// or https:// URL"

trim() { sed 's/^[[:space:]]*//; s/[[:space:]]*$//' <<<"$1"; }
declare -A append tests envs
lanes=(main)
append[main]=
tests[main]=
envs[main]=
while IFS= read -r line; do
	case $line in '' | '#'*) continue ;; esac
	IFS='|' read -r n a _ t v <<<"$line"
	n=$(trim "$n")
	lanes+=("$n")
	append[$n]=$(trim "$a")
	tests[$n]=$(trim "$t")
	envs[$n]=$(trim "$v")
done <"$TOP/selftests/variants.txt"
want=${LAVA_LANES:-${lanes[*]}}
for n in $want; do
	[ -n "${append[$n]+x}" ] || die $E_USAGE "LAVA_LANES: unknown lane '$n' (have: ${lanes[*]})"
done

rm -rf "$OUT"
mkdir -p "$OUT"/{series,devices,jobs,templates}
cp "$IMAGE" "$OUT/series/Image"
if [ -n "${LAVA_STOCK_IMAGE:-}" ]; then
	mkdir -p "$OUT/stock"
	cp "$LAVA_STOCK_IMAGE" "$OUT/stock/Image"
fi
cp "$TOP/selftests/plan/kvm.plan" "$TOP/selftests/skiplist.txt" "$TOP/selftests/variants.txt" "$OUT/"

# The console lines that a job's test action turns into LAVA test cases:
# the guest stages' TAP/KTAP results between the workbench's markers.
# LAVA records "ok" as pass, so a skip is a pass there; lava-collect.py
# reads skips (and everything else) from the console itself.
pattern='(?P<result>not ok|ok) [0-9]+ (?P<test_case_id>[^#\r\n]+?)(?=\s*(#|\r|\n))'

# job FILE DEVICE_TYPE NAME DEPLOY_YAML BOOT_YAML
job() {
	cat >"$1" <<EOF
# $3 ($(basename "$1")), made by scripts/lava.sh; Documentation/lava.md.
device_type: '$2'
job_name: 'arm64-kvm-series $3'
priority: medium
visibility: public
timeouts:
  job: {minutes: $((TMO + 20))}
  action: {minutes: $TMO}
  connection: {minutes: 2}
context: {arch: arm64}
actions:
$4
$5
- test:
    timeout: {minutes: $TMO}
    monitors:
    - name: workbench
      start: 'WORKBENCH-BEGIN'
      end: 'WORKBENCH-END'
      pattern: '$pattern'
      fixupdict: {ok: pass, 'not ok': fail}
EOF
}

for n in $want; do
	ovr=()
	qovr=()
	IFS=';' read -r -a kv <<<"${envs[$n]}"
	for x in "${kv[@]}"; do
		x=$(trim "$x")
		case $x in '') ;; QEMU_*) qovr+=("$x") ;; *) ovr+=("$x") ;; esac
	done
	v=LAVA_TESTS_$(tr 'a-z-' 'A-Z_' <<<"$n")
	t=${!v:-${LAVA_TESTS:-${tests[$n]}}}
	info "lane $n: initramfs (TESTS='${t:-the plan}'${LAVA_STAGES:+, STAGES='$LAVA_STAGES'})"
	lane=$n
	[ "$n" != main ] || lane=boot
	env -u STAGES_EXTRA "${ovr[@]}" LANE="$lane" TESTS="$t" ${LAVA_STAGES:+STAGES="$LAVA_STAGES"} \
		OUT="$OUT/series/$n.cpio.gz" "$TOP/scripts/initramfs.sh" >"$OUT/initramfs-$n.log" 2>&1 ||
		die $E_FAIL "lane $n: initramfs failed (log: $OUT/initramfs-$n.log)"
	rm -f "$OUT/initramfs-$n.log"

	# The QEMU machine of scripts/boot.sh, with the lane's overrides.
	machine=virt,virtualization=on,gic-version=3,its=on smp=2 mem=4G extra=
	for x in "${qovr[@]}"; do
		case $x in
		QEMU_MACHINE=*) machine=${x#*=} ;;
		QEMU_SMP=*) smp=${x#*=} ;;
		QEMU_MEM=*) mem=${x#*=} ;;
		QEMU_EXTRA=*) extra=${x#*=} ;;
		esac
	done
	possible=$smp
	[ "$smp" -ge 4 ] || possible=4
	lappend=${append[$n]}
	v=LAVA_APPEND_$(tr 'a-z-' 'A-Z_' <<<"$n")
	lappend="$lappend ${!v:-}"
	cmdline=$(xargs <<<"console=ttyAMA0 panic=-1 softlockup_panic=1 nmi_watchdog=nopanic $lappend maxcpus=$smp")
	{
		echo "# lane $n: the machine of scripts/boot.sh; made by scripts/lava.sh"
		cat <<EOF
available_architectures: [arm64]
constants:
  posix: {lava_test_sh_cmd: /bin/sh, lava_test_results_dir: /lava-%s, lava_test_shell_file: ~/.bashrc}
  kernel-start-message: 'Linux version [0-9]'
  default-shell-prompt: 'lava-test: # '
  shutdown-message: 'reboot: Power down'
  spawn_maxread: '4092'
  failure_retry: 1
  boot_retry:
actions:
  deploy:
    connections:
      serial:
    methods:
      image:
        parameters:
          guest: {size: 512, interface: ide, driveid: lavatest}
  boot:
    connections:
      serial:
    methods:
      qemu:
        parameters:
          command: qemu-system-aarch64
          options: ['-machine $machine', '-cpu max,pauth-impdef=on', '-smp $possible', '-m $mem', '-nographic', '-nic none', '-monitor none', '-no-reboot'${extra:+, '$extra'}]
timeouts: {actions: {}, connections: {}}
EOF
	} >"$OUT/devices/qemu-$n.yaml"

	for k in series stock; do
		[ -f "$OUT/$k/Image" ] || continue
		sfx=
		[ "$k" = series ] || sfx=-stock
		job "$OUT/jobs/qemu-$n$sfx.yaml" qemu "$n ($k, qemu)" "- deploy:
    to: tmpfs
    timeout: {minutes: 5}
    images:
      kernel:
        image_arg: -kernel {kernel} -append \"$cmdline\"
        url: $URL/$k/Image
      ramdisk:
        image_arg: -initrd {ramdisk}
        url: $URL/series/$n.cpio.gz
        compression: gz" "- boot:
    method: qemu
    media: tmpfs
    timeout: {minutes: 5}
    prompts: ['Run /init as init process']"
	done

	# A real board: TFTP, the initramfs as the root, U-Boot (with the
	# board's DTB) or GRUB.
	bargs="$(xargs <<<"panic=-1 softlockup_panic=1 $lappend")"
	tftp="- deploy:
    to: tftp
    timeout: {minutes: 10}
    kernel:
      url: '@KERNEL_URL@'
      type: image
    ramdisk:
      url: '@RAMDISK_URL@'
      compression: gz"
	for b in u-boot grub; do
		deploy=$tftp
		[ "$b" != u-boot ] || deploy="$tftp
    dtb:
      url: '@DTB_URL@'"
		job "$OUT/templates/board-${b/-/}-$n.yaml" @DEVICE_TYPE@ "$n (board, $b)" "$deploy" "- boot:
    method: $b
    commands: ramdisk
    timeout: {minutes: 10}
    prompts: ['Run /init as init process']"
	done
	# The lane's kernel parameters, which a board's bootloader must pass.
	for b in uboot grub; do
		sed -i "s|^context: {arch: arm64}|context: {arch: arm64, extra_kernel_args: '$bargs'}|" "$OUT/templates/board-$b-$n.yaml"
	done
done
info "pack in $OUT: $(ls "$OUT/jobs" | wc -l) qemu jobs, $(ls "$OUT/templates" | wc -l) board templates, $(du -sh "$OUT" | cut -f1)"
info "PASS in $(elapsed)"
