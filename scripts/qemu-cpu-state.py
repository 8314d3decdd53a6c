#!/usr/bin/env python3
"""Where are the guest's CPUs? Ask QEMU's HMP monitor and name the code.

usage: qemu-cpu-state.py SOCKET SYSTEM_MAP [SAMPLES] [OUT]

Connects to the monitor socket of a running QEMU (-monitor unix:SOCKET,...),
takes SAMPLES snapshots (default 5, one second apart) of "info registers -a",
and prints one line per CPU and snapshot: exception level, PC and the kernel
symbol the PC falls in (from SYSTEM_MAP; the L1 and L2 kernels are the same
Image). The full register dump goes to OUT if given. Used by scripts/boot.sh
when a guest stops making progress, so that a hang names a function instead
of only a timeout.

Exit: 0 sampled; 3 the monitor cannot be reached; 4 sampled, and some vCPU
was in KVM's EL2 exception path in every sample (EL2_LOOP below): KVM took
an exception at EL2 while its own vectors were installed and its panic path
faults again, for ever, with interrupts masked, so no lockup detector fires.
"""
import bisect
import re
import socket
import sys
import time


# KVM's hyp vectors and the panic path behind them (VHE, and nVHE with the
# __kvm_nvhe_ prefix). A vCPU found only here is in the EL2 exception loop.
EL2_LOOP = {"__kvm_hyp_vector", "el2_sync", "el2_error", "kvm_unexpected_el2_exception",
            "__guest_exit_panic", "__guest_exit_restore_elr_and_panic", "__guest_exit",
            "hyp_panic", "__hyp_call_panic"}


def load_map(path):
    addrs, names = [], []
    try:
        with open(path) as f:
            for ln in f:
                p = ln.split()
                if len(p) >= 3 and p[1] in "tTwW":
                    addrs.append(int(p[0], 16))
                    names.append(p[2])
    except OSError:
        pass
    order = sorted(range(len(addrs)), key=addrs.__getitem__)
    return [addrs[i] for i in order], [names[i] for i in order]


def symbolize(pc, addrs, names):
    i = bisect.bisect_right(addrs, pc) - 1
    if i < 0 or pc - addrs[i] > 0x100000:
        return "(not in System.map)"
    return "%s+0x%x" % (names[i], pc - addrs[i])


def hmp(sock, cmd):
    sock.sendall(cmd.encode() + b"\n")
    buf, deadline = b"", time.time() + 10
    while time.time() < deadline:
        try:
            d = sock.recv(65536)
        except socket.timeout:
            continue
        if not d:
            break
        buf += d
        # The reply ends at the next prompt, after the echoed command.
        if buf.rstrip().endswith(b"(qemu)") and b"CPU#" in buf:
            break
    return buf.decode(errors="replace").replace("\r", "")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    path, smap = sys.argv[1], sys.argv[2]
    samples = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    out = open(sys.argv[4], "a") if len(sys.argv) > 4 else None
    addrs, names = load_map(smap)
    try:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(1)
        s.connect(path)
    except OSError as e:
        print("qemu-cpu-state: cannot reach the QEMU monitor at %s: %s" % (path, e))
        return 3
    try:
        s.recv(65536)  # banner and first prompt
    except socket.timeout:
        pass
    where_by_cpu = {}
    for n in range(samples):
        text = hmp(s, "info registers -a")
        if out:
            out.write("===== sample %d =====\n%s\n" % (n + 1, text))
        for cpu, body in re.findall(r"CPU#(\d+)\n(.*?)(?=CPU#\d+\n|\Z)", text, re.S):
            pc = re.search(r"PC=([0-9a-f]+)", body)
            el = re.search(r"PSTATE=[0-9a-f]+ \S+ (EL\d\w)", body)
            if not pc:
                continue
            pcv = int(pc.group(1), 16)
            where = (symbolize(pcv, addrs, names) if pcv >> 48 == 0xffff
                     else "(not kernel text: a process or an L2 guest)")
            print("sample %d cpu%s %s pc=%016x %s" % (
                n + 1, cpu, el.group(1) if el else "EL?", pcv, where))
            where_by_cpu.setdefault(cpu, []).append(where.split("+")[0])
        if n + 1 < samples:
            time.sleep(1)
    looping = [c for c, fns in sorted(where_by_cpu.items())
               if len(fns) == samples and
               all(f.replace("__kvm_nvhe_", "", 1) in EL2_LOOP for f in fns)]
    for c in looping:
        print("cpu%s: in KVM's EL2 exception path in all %d samples "
              "(an exception at EL2 under KVM's vectors; the panic path faults again)"
              % (c, samples))
    return 4 if looping else 0


if __name__ == "__main__":
    sys.exit(main())
