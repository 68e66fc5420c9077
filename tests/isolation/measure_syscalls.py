"""Measure the system calls sandboxed workers make, to re-derive the seccomp allow-list.

The worker's filter (``autograder/isolation/inside/seccomp.py``) allows the calls named in its
tables and refuses every other. This script shows what those tables must hold: it runs the
course's gradings and the sandbox's hostile tests under ``strace -f`` (Debian's ``strace``,
used only here), finds in the traces every process and thread that ran under a worker's filter
(from the ``prctl(PR_SET_SECCOMP)`` that installs it on, and everything started after that), and
reports each call they made, with its arguments, and what the filter answers it.

    .venv/bin/python tests/isolation/measure_syscalls.py                  # every workload, about 30 minutes
    .venv/bin/python tests/isolation/measure_syscalls.py grading stdlib   # some of them

Its report lists the calls allowed (and how often each was made), the calls refused that
:data:`REFUSED` does not name (a new need of the runtime to allow, or a refusal to name there
with its reason: the script then exits 1), and the allowed calls no workload made. Run it
after a change of Python, of the C library or of the course's code, as root (the isolation
modes' tests need it). The measurement is of this machine's runtime; the aarch64 table names
the same calls.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from autograder.isolation.inside import seccomp  # noqa: E402

PYTHON = str(ROOT / ".venv" / "bin" / "python")
PYTEST = [PYTHON, "-m", "pytest", "-q", "-p", "no:randomly", "--no-header"]

# Calls the workloads make that the filter refuses on purpose, and why; any other refused call
# is a need to look at. Keyed by name, or by name and the argument the filter looks at.
REFUSED = {
    "socket": "the network: refused with EACCES (socketpair stays)",
    "unshare": "namespaces: the hostile tests try them",
    "mount": "the hostile tests try a tmpfs in a namespace of their own",
    "setsid": "its own scheduler autogroup: the attackers try it",
    "sched_setaffinity": "a worker keeps the affinity it was given: the attackers and the canary try it",
    "setpriority": "a worker keeps its priority: the attackers and the canary try it",
    "flock": "lock channels between workers: refused with ENOLCK",
    "fcntl": "record locks (ENOLCK), leases and F_NOTIFY: the attackers try them",
    "inotify_init1": "a watch reports names made where a worker cannot read",
    "inotify_add_watch": "as inotify_init1",
    "prlimit64": "another process's limits: the attackers and the canary try them",
    "getpriority": "another process's priority",
    "sched_getaffinity": "another process's affinity",
    "kill": "signals to processes outside the worker: the attackers and the canary try them",
    "chmod": "metadata: succeeds and changes nothing",
    "fchmodat": "as chmod",
    "chown": "metadata: the attackers and the canary try it",
    "fchownat": "as chown",
    "setxattr": "metadata: the attackers and the canary try it",
    "utimensat": "times: succeeds and changes nothing",
    "add_key": "kernel keyrings: tests/isolation/sandbox/test_calls.py tries them",
    "keyctl": "as add_key",
    "shmget": "System V IPC: tests/isolation/sandbox/test_calls.py tries it",
    "semget": "as shmget",
    "msgget": "as shmget",
    "mq_open": "POSIX message queues: tests/isolation/sandbox/test_calls.py tries them",
    "clone3": "its flags are in memory, out of a filter's sight: ENOSYS makes the C library use clone",
    "fork": "processes, where nothing counts or kills them: EAGAIN",
    "vfork": "as fork",
    "clone": "processes, where nothing counts or kills them (threads stay), and namespaces",
    "process_vm_readv": "another process's memory: tests/isolation/test_landlock.py tries it",
    "capget": "it reads any process's capabilities, by a pid out of a filter's sight: "
              "tests/isolation/sandbox/ tries it",
    "madvise": "MADV_DONTNEED, which glibc uses only to hand back memory it keeps using: it changes which pages"
               " of a file a process has mapped",
}


HEADERS = {"x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
           "aarch64": Path("/usr/include/asm-generic/unistd.h")}


def header_numbers(machine: str) -> dict[str, int]:
    """The numbers of the calls ``machine``'s kernel header on this system names (empty if it has
    none): x86_64's ``__NR_name N``, or the generic table aarch64 uses, with its 64-bit aliases
    (``__NR_fcntl __NR3264_fcntl``)."""
    path = HEADERS[{"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)]
    if not path.exists():
        return {}
    direct, aliases = {}, {}
    for line in path.read_text().splitlines():
        if (found := re.match(r"#define __NR(3264)?_(\w+)\s+(\d+)$", line.strip())) is not None:
            direct[(found.group(1) or "") + found.group(2)] = int(found.group(3))
        elif (found := re.match(r"#define __NR_(\w+)\s+__NR3264_(\w+)$", line.strip())) is not None:
            aliases[found.group(1)] = "3264" + found.group(2)
    numbers = {name: number for name, number in direct.items() if not name.startswith("3264") and name != "syscalls"}
    return numbers | {name: direct[base] for name, base in aliases.items() if base in direct}


# A worker's filter, run in Python on the call's number and arguments: classic BPF as seccomp runs it.
def run_filter(code: list[tuple[int, int, int, int]], arch: int, nr: int, args: list[int]) -> int:
    """What the filter ``code`` (instructions (op, jt, jf, k)) returns for a call."""
    data = [nr, arch, 0, 0]  # struct seccomp_data: nr, arch, instruction_pointer, args
    for value in (args + [0] * 6)[:6]:
        data += [value & 0xFFFFFFFF, (value >> 32) & 0xFFFFFFFF]
    accumulator, at = 0, 0
    while True:
        op, jt, jf, k = code[at]
        at += 1
        if op == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            accumulator = data[k // 4]
        elif op == 0x05:  # BPF_JMP | BPF_JA
            at += k
        elif op in (0x15, 0x35, 0x25, 0x45):  # JEQ, JGE, JGT, JSET with a constant
            taken = {0x15: accumulator == k, 0x35: accumulator >= k, 0x25: accumulator > k,
                     0x45: bool(accumulator & k)}[op]
            at += jt if taken else jf
        elif op == 0x06:  # BPF_RET | BPF_K
            return k
        else:
            raise ValueError(f"instruction {op:#x} is not one the worker's filter uses")


def answer(action: int) -> str:
    """A filter's return value, in words: allow, kill, or the errno it sets."""
    if action == seccomp.ALLOW:
        return "allow"
    if action & 0xFFFF0000 == seccomp.RET_ERRNO:
        error = action & 0xFFFF
        return "succeeds, changes nothing" if error == 0 else os.strerror(error).split(" (")[0] + f" ({error})"
    return f"{action:#x}"


# Reading strace's output (-X raw: every argument a number, strings and structures aside)
CALL = re.compile(r"^(\w+)\((.*?)(?:\) += (.*)| <unfinished \.\.\.>)$")
CHILD = re.compile(r"^(?:clone3?|fork|vfork)\(.*\) += (\d+)(?: /\* (\d+) in strace's PID NS \*/)?")
CLONE_ARGS = ("flags", "child_stack", "parent_tid", "child_tidptr", "tls")  # clone's, in the kernel's order


def split_arguments(text: str) -> list[str]:
    """strace's arguments, split at the commas outside brackets and strings."""
    parts, depth, quoted, start = [], 0, False, 0
    for index, char in enumerate(text):
        if char == '"' and text[index - 1] != "\\":
            quoted = not quoted
        elif not quoted and char in "([{":
            depth += 1
        elif not quoted and char in ")]}":
            depth -= 1
        elif not quoted and depth == 0 and char == ",":
            parts.append(text[start:index].strip())
            start = index + 1
    return [*parts, text[start:].strip()] if text.strip() else parts


def number(text: str) -> int | None:
    """An argument as the filter sees it (its value, a pointer as None), or None if it is none."""
    text = re.sub(r"\s*/\*.*?\*/", "", text)  # "2 /* 1234 in strace's PID NS */": the pid the caller named
    text = text.split("=", 1)[1] if re.match(r"^\w+=", text) else text
    if text == "NULL":
        return 0
    try:
        value = 0
        for part in text.split("|"):
            value |= int(part, 0)
    except ValueError:
        return None
    return None if value >= 1 << 32 else value & 0xFFFFFFFF  # above 4 GiB: an address


def arguments(name: str, text: str) -> tuple[int | None, ...]:
    parts = split_arguments(text)
    if name == "clone":  # strace shows child_stack first; the filter reads the kernel's order
        named = dict(part.split("=", 1) for part in parts if "=" in part)
        parts = [named.get(key, "0") for key in CLONE_ARGS]
    return tuple(number(part) for part in parts[:6])


def read_traces(folder: Path) -> tuple[dict[int, list[str]], dict[int, int | None], dict[int, tuple[int, int]]]:
    """strace -ff's files in ``folder``: each pid's lines, the line its own filter is installed at
    (or None), and its parent's pid with the line of the call that started it."""
    marks: dict[int, int | None] = {}
    parents: dict[int, tuple[int, int]] = {}
    lines: dict[int, list[str]] = {}
    for path in folder.iterdir():
        pid = int(path.suffix[1:])
        lines[pid] = path.read_text(errors="replace").splitlines()
        marks[pid] = next((index for index, line in enumerate(lines[pid])
                           if line.startswith(("prctl(0x16, 0x2,", "seccomp(0x1,")) and line.endswith("= 0")), None)
        for index, line in enumerate(lines[pid]):
            if (child := CHILD.match(line)) is not None:
                parents[int(child.group(2) or child.group(1))] = (pid, index)
    return lines, marks, parents


def confined_calls(folder: Path) -> Counter:
    """(name, arguments) -> how often, of every call made under a worker's filter in the traces
    of ``folder`` (strace -ff's files, one a process or thread)."""
    lines, marks, parents = read_traces(folder)

    def start(pid: int) -> int | None:  # the first line run under a filter
        if pid in parents:
            parent, at = parents[pid]
            since = start(parent) if parent in lines else None
            if since is not None and since <= at:
                return 0
        return marks.get(pid)

    found: Counter = Counter()
    for pid, text in lines.items():
        since = start(pid)
        if since is None:
            continue
        for line in text[since + 1 if marks.get(pid) == since else since:]:
            if (call := CALL.match(line)) is not None:
                found[call.group(1), arguments(call.group(1), call.group(2))] += 1
    return found


def trace(command: list[str], env: dict[str, str], folder: Path, timeout: float) -> int:
    """Run ``command`` under strace, each process's trace in ``folder``; its exit status."""
    strace = ["strace", "-f", "-ff", "-qq", "-s", "0", "-X", "raw", "-e", "signal=none", "--pidns-translation",
              "-o", str(folder / "trace")]
    try:
        return subprocess.run([*strace, *command], cwd=ROOT, env={**os.environ, **env}, timeout=timeout,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    except subprocess.TimeoutExpired:
        return -1


# What honest student code may ask of the runtime beyond what the course's code does, run in a
# process confined as a worker is: threads, processes, files, time, memory.
STDLIB = '''
import sys
sys.path.insert(0, {inside!r})
import seccomp
seccomp.restrict(processes=False, pid_namespace=True)
import concurrent.futures, gc, hashlib, json, mmap, os, random, resource, selectors, subprocess, tempfile, time
import threading, zlib
with concurrent.futures.ThreadPoolExecutor(4) as pool:
    assert sum(pool.map(lambda n: sum(range(n)), [10 ** 5] * 8)) > 0
assert subprocess.run(["sh", "-c", "echo ok"], capture_output=True, text=True, timeout=10).stdout == "ok\\n"
try:
    subprocess.run(["sleep", "5"], timeout=0.2)
except subprocess.TimeoutExpired:
    pass
with tempfile.TemporaryDirectory() as folder:
    with open(os.path.join(folder, "f"), "w") as file:
        file.write(json.dumps({{"a": [1, 2]}}))
    assert os.listdir(folder) == ["f"] and os.path.getsize(os.path.join(folder, "f")) > 0
time.sleep(0.01)
with selectors.DefaultSelector() as waiting:
    reading, writing = os.pipe()
    waiting.register(reading, selectors.EVENT_READ)
    os.write(writing, b"x")
    assert waiting.select(1)
blocks = [bytearray(1 << 20) for _ in range(200)]
del blocks
gc.collect()
anonymous = mmap.mmap(-1, 1 << 20)
anonymous[:5] = b"hello"
import asyncio, shutil, signal


async def chat():
    await asyncio.sleep(0.01)
    child = await asyncio.create_subprocess_exec("true")
    return await child.wait()
assert asyncio.run(chat()) == 0
signal.signal(signal.SIGALRM, lambda *_: None)
signal.setitimer(signal.ITIMER_REAL, 0.01)
time.sleep(0.05)
with tempfile.TemporaryDirectory() as folder:
    shutil.copy2(__file__, os.path.join(folder, "copy"))
    os.replace(os.path.join(folder, "copy"), os.path.join(folder, "moved"))
    assert os.path.realpath(os.path.join(folder, "moved")).endswith("moved")
print(os.cpu_count(), len(os.sched_getaffinity(0)), resource.getrlimit(resource.RLIMIT_NOFILE),
      os.getpriority(os.PRIO_PROCESS, 0), random.random() < 1, hashlib.sha256(b"x").hexdigest()[:4],
      len(zlib.compress(b"x" * 1000)), time.process_time() >= 0, os.times()[0] >= 0)
'''


def workloads(folder: Path) -> dict[str, tuple[list[str], dict[str, str], float]]:
    """Each workload: its command, environment and time limit."""
    from tests.course.catalog import ALTERNATIVES, build_alternative, build_reference, build_stubs

    subs = [build_reference(folder / "reference"), build_stubs(folder / "stubs")]
    subs += [build_alternative(folder / name, name) for name in ALTERNATIVES]
    sample = folder / "sample"
    shutil.copytree(ROOT / "samples" / "partly_wrong", sample)
    grade = [PYTHON, "-m", "autograder", "grade", *map(str, [*subs, sample]), "--jobs", "2", "--force"]
    (folder / "stdlib.py").write_text(STDLIB.format(inside=str(ROOT / "autograder" / "isolation" / "inside")))
    return {
        "grading": ([*grade, "--out", str(folder / "out")], {}, 1800),
        "grading, landlock only": ([*grade, "--out", str(folder / "out-landlock")], {"AUTOGRADER_LAYERS": "landlock"},
                                   1800),
        "sandbox": ([*PYTEST, "tests/isolation/sandbox", "tests/isolation/test_hostile.py",
                     "tests/isolation/test_canary.py"], {}, 3600),
        "modes": ([*PYTEST, "tests/isolation/test_isolation_modes.py"], {}, 3600),
        "catalog": ([*PYTEST, "tests/course/test_mutant_catalog.py"], {}, 3600),
        "stdlib": ([PYTHON, str(folder / "stdlib.py")], {}, 600),
    }


def measure(names: list[str]) -> dict[str, dict[tuple, int]]:
    """workload -> its confined calls (:func:`confined_calls`)."""
    measured = {}
    with tempfile.TemporaryDirectory(prefix="measure-syscalls-") as scratch:
        base = Path(scratch)
        base.chmod(0o755)
        every = workloads(base)
        for name in names or list(every):
            command, env, timeout = every[name]
            folder = base / f"trace-{len(measured)}"
            folder.mkdir()
            status = trace(command, env, folder, timeout)
            measured[name] = dict(confined_calls(folder))
            print(f"{name}: exit {status}, {sum(measured[name].values())} calls under the filter", file=sys.stderr)
            shutil.rmtree(folder)
    return measured


def report(measured: dict[str, dict[tuple, int]]) -> tuple[str, bool]:
    """The report in words, and whether every refused call is one :data:`REFUSED` names."""
    machine = seccomp.machine()
    arch, column, _ = seccomp.MACHINES[machine]
    code = seccomp.program(machine, processes=False, metadata=True, pid_namespace=True, own_pid=2)
    numbers = header_numbers(machine) | {name: pair[column] for name, pair in seccomp.NUMBERS.items()
                                          if pair[column] is not None}
    allowed, refused = Counter(), defaultdict(set)
    for workload, calls in measured.items():
        for (name, args), count in calls.items():
            if name not in numbers:
                refused[name, "not a call this machine's header names"].add(workload)
                continue
            said = answer(run_filter(code, arch, numbers[name], [a or 0 for a in args]))
            if said == "allow":
                allowed[name] += count
            else:
                refused[name, said].add(workload)
    lines = [f"{len(allowed)} calls allowed and made, of {len(seccomp.allowed_names(machine))} allowed:"]
    lines += [f"  {name:24} {count:>10}" for name, count in sorted(allowed.items(), key=lambda item: -item[1])]
    unknown = sorted(key for key in refused if key[0] not in REFUSED)
    lines.append("refused, each on purpose (REFUSED):")
    lines += [f"  {name:24} {said:28} {', '.join(sorted(refused[name, said]))}: {REFUSED[name]}"
              for name, said in sorted(refused) if name in REFUSED]
    lines.append("refused, NOT named in REFUSED (allow it, or name it with its reason):")
    lines += [f"  {name:24} {said:28} {', '.join(sorted(refused[name, said]))}" for name, said in unknown]
    unused = sorted(set(seccomp.allowed_names(machine)) - set(allowed))
    lines.append(f"allowed, made by no workload ({len(unused)}): {' '.join(unused)}")
    return "\n".join(lines), not unknown


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="*", help="the workloads to run (default: all)")
    parser.add_argument("--json", type=Path, help="also write every confined call, by workload, to this file")
    parser.add_argument("--from-json", type=Path, help="report on a file --json wrote, running nothing")
    args = parser.parse_args()
    if shutil.which("strace") is None and args.from_json is None:
        print("needs strace (Debian: apt-get install strace)", file=sys.stderr)
        return 2
    if args.from_json:
        raw = json.loads(args.from_json.read_text())
        measured = {w: {(c[0], tuple(c[1])): n for c, n in calls} for w, calls in raw.items()}
    else:
        measured = measure(args.workloads)
    if args.json:
        args.json.write_text(json.dumps({w: [[[n, list(a)], count] for (n, a), count in calls.items()]
                                         for w, calls in measured.items()}))
    text, known = report(measured)
    print(text)
    return 0 if known else 1


if __name__ == "__main__":
    sys.exit(main())
