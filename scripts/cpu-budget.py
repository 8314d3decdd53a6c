#!/usr/bin/env python3
"""Run a command with a CPU-time budget, and a wall-clock backstop far above it.

usage: cpu-budget.py [--name NAME] [--wall SECONDS] CPU_SECONDS CMD [ARG...]

The guard of the host-side checks against a hang (make check runs them in a
second lane at nice 10, beside a TCG guest, on machines that may be busy with
other work): a run that is starved of CPU is not a hung run, so what ends it is
the CPU it has used, which load cannot raise. CPU_SECONDS is RLIMIT_CPU of the
command's process (lower if this runner has a lower limit): the kernel sends
SIGXCPU when that process has used so much CPU time, SIGKILL two seconds later.
It is a limit per process: a child the command starts gets the same limit of
its own. A hang that uses no CPU (blocked on a lock, a pipe, a sleep) is ended
by the wall-clock backstop: --wall, or CPU_BUDGET_WALL_FACTOR (default 100)
times CPU_SECONDS of wall time, far above what load makes of a run that needs
a few per cent of its budget; it ends the command's whole process group, as
does a SIGINT, SIGTERM or SIGHUP to this runner. Should this runner be killed
outright, its direct child gets SIGKILL (PR_SET_PDEATHSIG).

CPU_BUDGET_REPORT=1: also say, on stderr, what a run that ended by itself used
("cpu-budget: NAME: ... s of CPU of its ... s budget, ... s of wall time").

Exit: the command's own exit code; 124 when the budget or the backstop ended
it, with one line on stderr that says which, the CPU it had used, its limit and
its wall time ("cpu-budget: TIMEOUT: ..."); 128+N when a signal N from
elsewhere ended it; 127 when it cannot be run; 1 on a usage error.
"""
import ctypes
import os
import resource
import signal
import sys
import time

PROG = "cpu-budget"
PR_SET_PDEATHSIG = 1


def usage(msg):
    print(f"{PROG}: {msg}\nusage: cpu-budget.py [--name NAME] [--wall SECONDS] "
          "CPU_SECONDS CMD [ARG...]", file=sys.stderr)
    sys.exit(1)


def seconds(what, text):
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1:
        usage(f"{what} '{text}' is not a whole number of seconds (1 or more)")
    return v


def limits(budget):
    """RLIMIT_CPU (soft, hard) for the command: the budget, within the
    limits this runner has."""
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard == resource.RLIM_INFINITY or hard >= budget + 2:
        hard = budget + 2
    if soft == resource.RLIM_INFINITY or soft > budget:
        soft = budget
    return min(soft, hard), hard


def child(cmd, name, rlim, parent):
    try:
        os.setpgid(0, 0)
        # End with this runner, whatever ends it.
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os._exit(127)
        resource.setrlimit(resource.RLIMIT_CPU, rlim)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        # As a shell starts a command: Python ignores these two.
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        os.execvp(cmd[0], cmd)
    except OSError as e:
        print(f"{PROG}: {name}: cannot run {cmd[0]}: {e.strerror}", file=sys.stderr)
    except BaseException as e:  # noqa: BLE001 - the child must never return
        print(f"{PROG}: {name}: cannot run {cmd[0]}: {e}", file=sys.stderr)
    os._exit(127)


def main():
    args = sys.argv[1:]
    name, wall = None, None
    while args and args[0].startswith("--"):
        if args[0] in ("--name", "--wall") and len(args) > 1:
            if args[0] == "--name":
                name = args[1]
            else:
                wall = seconds("--wall", args[1])
            args = args[2:]
        elif args[0] == "--":
            args = args[1:]
            break
        else:
            usage(f"unknown option {args[0]}")
    if len(args) < 2:
        usage("CPU_SECONDS and a command are required")
    budget = seconds("CPU_SECONDS", args[0])
    cmd = args[1:]
    name = name or os.path.basename(cmd[0])
    if wall is None:
        factor = seconds("CPU_BUDGET_WALL_FACTOR",
                         os.environ.get("CPU_BUDGET_WALL_FACTOR", "100"))
        wall = budget * factor
    rlim = limits(budget)
    limit = rlim[0]

    state = {"backstop": False, "pid": None}

    def kill_group(sig):
        if state["pid"]:
            try:
                os.killpg(state["pid"], sig)
            except ProcessLookupError:
                pass

    def on_alarm(_sig, _frame):
        state["backstop"] = True
        kill_group(signal.SIGKILL)

    def on_stop(sig, _frame):
        # The command is in a group of its own, where Ctrl-C does not reach.
        kill_group(signal.SIGKILL)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)

    # Handlers before the fork, so that no signal finds the command
    # outside their reach; a signal the caller ignores stays ignored.
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(s) != signal.SIG_IGN:
            signal.signal(s, on_stop)
    signal.signal(signal.SIGALRM, on_alarm)
    parent = os.getpid()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        child(cmd, name, rlim, parent)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass  # the child did it first, or has already exec'd
    state["pid"] = pid
    signal.alarm(wall)
    while True:
        try:
            _, status, ru = os.wait4(pid, 0)
            break
        except InterruptedError:
            continue
    signal.alarm(0)
    used = ru.ru_utime + ru.ru_stime
    took = time.monotonic() - t0
    if state["backstop"]:
        print(f"{PROG}: TIMEOUT: {name} did not end in {wall} s of wall time (the backstop), "
              f"having used {used:.1f} s of CPU of its {limit} s budget: a hang that uses "
              "no CPU (blocked)", file=sys.stderr)
        return 124
    # Ended by the limit: the command itself, or (a shell that ran it as a
    # child) with the shell's code for that signal. SIGXCPU comes from
    # RLIMIT_CPU alone; SIGKILL counts only once the budget is spent (the
    # accounting behind rusage lags the limit's by a tick or so).
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    code = os.WEXITSTATUS(status) if sig is None else 128 + sig
    if code == 128 + signal.SIGXCPU or (code == 128 + signal.SIGKILL and used >= 0.9 * limit):
        print(f"{PROG}: TIMEOUT: {name} used its CPU budget: {used:.1f} s of CPU, "
              f"limit {limit} s, in {took:.1f} s of wall time", file=sys.stderr)
        return 124
    if os.environ.get("CPU_BUDGET_REPORT") == "1":
        print(f"{PROG}: {name}: {used:.2f} s of CPU of its {limit} s budget, "
              f"{took:.1f} s of wall time", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
