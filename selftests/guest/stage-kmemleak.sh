#!/bin/sh
# Stage "kmemleak" (PROFILE=debug, after the tests): ask kmemleak for the
# objects nothing references any more. The kernel is built without
# background scans (configs/debug.config), so this is the first scan: it
# covers the boot and every test before it. kmemleak reports an object
# only when two scans in a row found it unreferenced, and not before it is
# a few seconds old: scan, wait, scan again.
K=/sys/kernel/debug/kmemleak
echo "KTAP version 1"
echo "1..1"
if [ ! -w "$K" ]; then
	echo "not ok 1 kmemleak # $K missing: kernel without CONFIG_DEBUG_KMEMLEAK, or kmemleak disabled itself (see dmesg)"
	dmesg | grep -i kmemleak | tail -n 5 | sed 's/^/# /'
	exit 1
fi
echo scan >"$K"
sleep 6
echo scan >"$K"
cat "$K" >/tmp/kmemleak.out
n=$(grep -c '^unreferenced object' /tmp/kmemleak.out)
if [ "$n" = 0 ]; then
	echo "ok 1 kmemleak # no unreferenced object"
	exit 0
fi
# The console splat check (scripts/report.py) matches this line as well.
echo "# kmemleak: $n new suspected memory leaks"
head -n 60 /tmp/kmemleak.out | sed 's/^/# /'
echo "not ok 1 kmemleak # $n unreferenced object(s)"
exit 1
