#!/bin/sh
# Stage "kvm-check": KVM must be usable in the L1 guest. No /dev/kvm is a
# failure, not a skip: every later stage would silently test nothing.
echo "KTAP version 1"
echo "1..2"
if dmesg | grep -q 'kvm \[1\]: .*mode initialized successfully'; then
	echo "ok 1 kvm-initialized # $(dmesg | grep -o 'kvm \[1\]: .*mode initialized successfully' | head -n1)"
else
	echo "not ok 1 kvm-initialized # no 'mode initialized successfully' line in dmesg"
	dmesg | grep -i kvm | sed 's/^/# /'
	exit 1
fi
if [ -c /dev/kvm ]; then
	echo "ok 2 dev-kvm"
else
	echo "not ok 2 dev-kvm # /dev/kvm missing"
	exit 1
fi
