# shellcheck shell=bash
# LAVA job definitions of the workbench's boots, sourced by scripts/lava.sh
# (the make check lanes) and scripts/bench.sh (BENCH_LAVA: make bench's
# boots). Needs lib.sh and the caller's $stage. Documentation/lava.md.

# The console lines that a job's test action turns into LAVA test cases:
# the guest stages' TAP/KTAP results between the workbench's markers.
# LAVA records "ok" as pass, so a skip is a pass there; lava-collect.py
# reads skips (and everything else) from the console itself.
: "${stage:?}"
LAVA_PATTERN='(?P<result>not ok|ok) [0-9]+ (?P<test_case_id>[^#\r\n]+?)(?=\s*(#|\r|\n))'

# lava_job FILE DEVICE_TYPE NAME DEPLOY_YAML BOOT_YAML MINUTES
lava_job() {
	cat >"$1" <<EOF
# $3 ($(basename "$1")), made by scripts/${stage}.sh; Documentation/lava.md.
device_type: '$2'
job_name: 'arm64-kvm-series $3'
priority: medium
visibility: public
timeouts:
  job: {minutes: $(($6 + 20))}
  action: {minutes: $6}
  connection: {minutes: 2}
context: {arch: arm64}
actions:
$4
$5
- test:
    timeout: {minutes: $6}
    monitors:
    - name: workbench
      start: 'WORKBENCH-BEGIN'
      end: 'WORKBENCH-END'
      pattern: '$LAVA_PATTERN'
      fixupdict: {ok: pass, 'not ok': fail}
EOF
}

# lava_device FILE COMMENT MACHINE SMP MEM EXTRA: a lava-run device file
# for the qemu device type, the machine of scripts/boot.sh (SMP CPUs
# online of max(SMP, 4) possible, as boot.sh does).
lava_device() {
	local possible=$4
	[ "$4" -ge 4 ] || possible=4
	{
		echo "# $2; made by scripts/${stage}.sh"
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
          options: ['-machine $3', '-cpu max,pauth-impdef=on', '-smp $possible', '-m $5', '-nographic', '-nic none', '-monitor none', '-no-reboot'${6:+, '$6'}]
timeouts: {actions: {}, connections: {}}
EOF
	} >"$1"
}

# lava_cmdline SMP PARAMS: the kernel command line of scripts/boot.sh
lava_cmdline() {
	xargs <<<"console=ttyAMA0 panic=-1 softlockup_panic=1 nmi_watchdog=nopanic $2 maxcpus=$1"
}

# lava_qemu_job FILE NAME KERNEL_URL RAMDISK_URL CMDLINE MINUTES
lava_qemu_job() {
	lava_job "$1" qemu "$2" "- deploy:
    to: tmpfs
    timeout: {minutes: 5}
    images:
      kernel:
        image_arg: -kernel {kernel} -append \"$5\"
        url: $3
      ramdisk:
        image_arg: -initrd {ramdisk}
        url: $4
        compression: gz" "- boot:
    method: qemu
    media: tmpfs
    timeout: {minutes: 5}
    prompts: ['Run /init as init process']" "$6"
}

# lava_board_templates DIR NAME PARAMS MINUTES: DIR/board-{uboot,grub}-NAME.yaml,
# jobs for a real board: TFTP, the initramfs as the root, U-Boot (with
# the board's DTB) or GRUB; PARAMS are the kernel parameters the
# bootloader must pass. @DEVICE_TYPE@, @KERNEL_URL@, @RAMDISK_URL@ and
# @DTB_URL@ are left for scripts/lava-render.sh.
lava_board_templates() {
	local b deploy bargs tftp
	bargs=$(xargs <<<"panic=-1 softlockup_panic=1 $3")
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
		lava_job "$1/board-${b/-/}-$2.yaml" @DEVICE_TYPE@ "$2 (board, $b)" "$deploy" "- boot:
    method: $b
    commands: ramdisk
    timeout: {minutes: 10}
    prompts: ['Run /init as init process']" "$4"
		sed -i "s|^context: {arch: arm64}|context: {arch: arm64, extra_kernel_args: '$bargs'}|" \
			"$1/board-${b/-/}-$2.yaml"
	done
}

# lava_run ID DIR DEVICE JOB LOG: lava-run the job offline (scratch and
# output under DIR); its exit status, LAVA's job verdict, is not the
# test's: lava-collect.py reads the cases and the console.
lava_run() {
	mkdir -p "$2/scratch"
	[ -f "$2/dispatcher.yaml" ] || printf 'prefix: %s/scratch/job-\n' "$2" >"$2/dispatcher.yaml"
	lava-run --job-id "$1" --output-dir "$2/out/$1" --device "$3" \
		--dispatcher "$2/dispatcher.yaml" "$4" >"$5" 2>&1 || true
}
