#!/usr/bin/env python3
"""A stand-in for QEMU's HMP monitor, for testing scripts/qemu-cpu-state.py.

usage: fake-qemu-monitor.py SOCKET SYSTEM_MAP SYM0 [SYM1 ...]

Listens on the unix SOCKET and answers every "info registers -a" with one
CPU per SYM, its PC at that kernel symbol's address (+4) from SYSTEM_MAP,
in the format QEMU 7.2 prints (CR LF line ends, echo, "(qemu)" prompt).
Serves clients one after the other until it is killed.
"""
import os
import socket
import sys


def main():
    path, smap, syms = sys.argv[1], sys.argv[2], sys.argv[3:]
    addr = {}
    with open(smap) as f:
        for ln in f:
            p = ln.split()
            if len(p) >= 3:
                addr.setdefault(p[2], int(p[0], 16))
    missing = [s for s in syms if s not in addr]
    if missing:
        sys.exit("fake-qemu-monitor: not in %s: %s" % (smap, " ".join(missing)))
    if os.path.exists(path):
        os.unlink(path)
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(1)
    while True:
        conn, _ = srv.accept()
        serve(conn, syms, addr)
        conn.close()


def serve(conn, syms, addr):
    conn.sendall(b"QEMU 7.2.22 monitor - type 'help' for more information\r\n(qemu) ")
    buf = b""
    while True:
        try:
            d = conn.recv(4096)
        except OSError:
            return
        if not d:
            return
        buf += d
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            out = line.strip() + b"\r\n"
            if line.strip() == b"info registers -a":
                for i, s in enumerate(syms):
                    out += (b"\r\nCPU#%d\r\n PC=%016x X00=0000000000000000 X01=0000000000000100\r\n"
                            b"PSTATE=204003c9 --C- EL2h  SVCR=00000000 --  BTYPE=0\r\n"
                            % (i, addr[s] + 4))
            conn.sendall(out + b"(qemu) ")


if __name__ == "__main__":
    sys.exit(main())
