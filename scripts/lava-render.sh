#!/usr/bin/env bash
# Fill in a board template of the LAVA pack (make lava):
#   scripts/lava-render.sh TEMPLATE DEVICE_TYPE KERNEL_URL RAMDISK_URL [DTB_URL] >job.yaml
# DEVICE_TYPE is the lab's device type (e.g. juno-r2, synquacer); the URLs
# are where the lab's dispatcher fetches the pack's files: KERNEL_URL its
# series/Image (or stock/Image), RAMDISK_URL a series/<lane>.cpio.gz of
# the same lane as the template, DTB_URL the board's device tree (U-Boot
# templates only).
stage=lava-render
. "$(dirname "$0")/lib.sh"
[ $# -ge 4 ] && [ $# -le 5 ] || die $E_USAGE "usage: $0 TEMPLATE DEVICE_TYPE KERNEL_URL RAMDISK_URL [DTB_URL]"
tpl=$1 dt=$2 k=$3 r=$4 d=${5:-}
[ -r "$tpl" ] || die $E_USAGE "no template $tpl"
[[ $dt =~ ^[a-zA-Z0-9_.-]+$ ]] || die $E_USAGE "DEVICE_TYPE '$dt': letters, digits, '.', '_' and '-' only"
for u in "$k" "$r" ${d:+"$d"}; do
	[[ $u =~ ^(file|https?|tftp)://[^[:space:]\'\|]+$ ]] || die $E_USAGE "'$u' is not a file://, http(s):// or tftp:// URL"
done
if grep -q '@DTB_URL@' "$tpl"; then
	[ -n "$d" ] || die $E_USAGE "$tpl boots with U-Boot: give the board's DTB_URL"
elif [ -n "$d" ]; then
	die $E_USAGE "$tpl takes no DTB_URL"
fi
sed -e "s|@DEVICE_TYPE@|$dt|g" -e "s|@KERNEL_URL@|$k|g" -e "s|@RAMDISK_URL@|$r|g" -e "s|@DTB_URL@|$d|g" "$tpl"
