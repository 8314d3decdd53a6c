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
. "$TOP/scripts/lava-lib.sh"
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
	lappend=${append[$n]}
	v=LAVA_APPEND_$(tr 'a-z-' 'A-Z_' <<<"$n")
	lappend="$lappend ${!v:-}"
	lava_device "$OUT/devices/qemu-$n.yaml" "lane $n: the machine of scripts/boot.sh" \
		"$machine" "$smp" "$mem" "$extra"

	for k in series stock; do
		[ -f "$OUT/$k/Image" ] || continue
		sfx=
		[ "$k" = series ] || sfx=-stock
		lava_qemu_job "$OUT/jobs/qemu-$n$sfx.yaml" "$n ($k, qemu)" "$URL/$k/Image" \
			"$URL/series/$n.cpio.gz" "$(lava_cmdline "$smp" "$lappend")" "$TMO"
	done

	# A real board: the lane's kernel parameters go in the job.
	lava_board_templates "$OUT/templates" "$n" "$lappend" "$TMO"
done
info "pack in $OUT: $(ls "$OUT/jobs" | wc -l) qemu jobs, $(ls "$OUT/templates" | wc -l) board templates, $(du -sh "$OUT" | cut -f1)"
info "PASS in $(elapsed)"
