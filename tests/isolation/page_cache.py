"""The page cache as a channel between students: a toy course with a data file
every worker may read, a sender that writes a secret into which of its pages are cached, and a
receiver that reads them back and says what it found in its public feedback.

The sender evicts (``posix_fadvise(DONTNEED)``, ``madvise(MADV_PAGEOUT)``) or loads (a read) one
page a bit, 16 bits and their complements, again and again for a window of seconds. The receiver
looks by every means that needs no clock: ``preadv2(RWF_NOWAIT)``, ``mincore`` and ``cachestat``
until one of them decodes a word (for a window too), then the major page faults that touching each
page costs (``getrusage``). ``tests/isolation/test_isolation_modes.py`` grades them at once and
one after the other, in every isolation mode: what the receiver says must not depend on the secret.
Graded at once, a window of a second makes the two overlap; one after the other, the cache holds
what the sender left, and one look is enough (a window of 0). Unconfined, with the workers' system
call filter off, the receiver reads the word either way.
"""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path

from tests.conftest import ROOT

TOY = ROOT / "tests" / "fixtures" / "toy_course"
PAGES = 32  # 16 bits and their complements, a page each

COMMON = '''
import ctypes, mmap, os, time

CHANNEL = {channel!r}
WINDOW = {window}  # seconds
PAGE = mmap.PAGESIZE
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]


def attempt(action, *args):
    try:
        action(*args)
    except OSError:
        pass


def mapped(fd):
    """The channel file mapped, untouched (its address), or None."""
    address = libc.mmap(None, {pages} * PAGE, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    return None if address in (None, ctypes.c_void_p(-1).value) else address
'''

SENDER = COMMON + '''
SECRET = {secret}
SENT = []


def send():
    word = SECRET | (~SECRET & 0xFFFF) << 16
    fd = os.open(CHANNEL, os.O_RDONLY)
    attempt(os.posix_fadvise, fd, 0, 0, os.POSIX_FADV_RANDOM)  # a read loads its own page only
    address = mapped(fd)
    for bit in range({pages}):
        if word >> bit & 1:
            os.pread(fd, 1, bit * PAGE)
        else:
            attempt(os.posix_fadvise, fd, bit * PAGE, PAGE, os.POSIX_FADV_DONTNEED)
            if address is not None:
                libc.madvise(ctypes.c_void_p(address + bit * PAGE), PAGE, 21)  # MADV_PAGEOUT
    os.close(fd)


def add_all(numbers):
    if not isinstance(numbers, list):
        raise TypeError("numbers must be a list")
    until = time.monotonic() + (0 if SENT else WINDOW)
    SENT.append(True)
    send()
    while time.monotonic() < until:
        time.sleep(0.05)
        send()
    return sum(numbers)
'''

RECEIVER = COMMON + '''
import resource

SEEN = []


def decoded(bits):
    if bits is None or any(bits[i] == bits[16 + i] for i in range(16)):
        return None
    return sum(bits[i] << i for i in range(16))


def by_nowait(fd, address):
    bits = []
    for bit in range({pages}):
        try:
            os.preadv(fd, [bytearray(1)], bit * PAGE, os.RWF_NOWAIT)
            bits.append(1)
        except BlockingIOError:
            bits.append(0)
        except OSError:
            return None
    return bits


def by_mincore(fd, address):
    vector = ctypes.create_string_buffer({pages})
    if address is None or libc.mincore(ctypes.c_void_p(address), {pages} * PAGE, vector) != 0:
        return None
    return [byte & 1 for byte in vector.raw]


def by_cachestat(fd, address):
    bits = []
    for bit in range({pages}):
        where = ctypes.create_string_buffer((bit * PAGE).to_bytes(8, "little") + PAGE.to_bytes(8, "little"))
        stat = ctypes.create_string_buffer(40)  # struct cachestat: nr_cache first
        if libc.syscall(451, fd, where, stat, 0) != 0:
            return None
        bits.append(1 if int.from_bytes(stat.raw[:8], "little") else 0)
    return bits


def by_faults(fd, address):
    if address is None or libc.madvise(ctypes.c_void_p(address), {pages} * PAGE, 1) != 0:  # MADV_RANDOM
        return None
    bits = []
    for bit in range({pages}):
        try:
            before = resource.getrusage(resource.RUSAGE_SELF).ru_majflt
            ctypes.string_at(address + bit * PAGE, 1)
            bits.append(1 if resource.getrusage(resource.RUSAGE_SELF).ru_majflt == before else 0)
        except OSError:
            return None
    return bits


def observe():
    fd = os.open(CHANNEL, os.O_RDONLY)
    attempt(os.posix_fadvise, fd, 0, 0, os.POSIX_FADV_RANDOM)  # no probe loads a page beside its own
    address = mapped(fd)
    until = time.monotonic() + WINDOW
    while True:
        found = {{probe.__name__: decoded(probe(fd, address)) for probe in (by_nowait, by_mincore, by_cachestat)}}
        if any(found.values()) or time.monotonic() >= until:
            break
        time.sleep(0.05)
    found["by_faults"] = decoded(by_faults(fd, address))
    return " ".join(f"{{name}}={{'nothing' if value is None else value}}" for name, value in sorted(found.items()))


def add_all(numbers):
    if not isinstance(numbers, list):
        raise TypeError("numbers must be a list")
    if not SEEN:
        SEEN.append(observe())
    raise ValueError("observed " + SEEN[0])
'''


def course(folder: Path) -> tuple[Path, Path]:
    """A copy of the toy course in ``folder`` whose workers may all read a data file of its own,
    which nothing else reads, written out and dropped from the cache so that each of its pages
    starts cold: the course file and the data file."""
    shutil.copytree(TOY, folder, ignore=shutil.ignore_patterns("__pycache__"))
    channel = folder / "channel.bin"
    channel.write_bytes(bytes(range(256)) * (PAGES * 64))
    text = (folder / "course.yaml").read_text()
    (folder / "course.yaml").write_text(text + "\nsandbox:\n  readonly_paths: [channel.bin]\n")
    descriptor = os.open(channel, os.O_RDONLY)
    try:  # a dirty page cannot be evicted, and the large folios a write makes tie neighbouring pages together
        os.fsync(descriptor)
        os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(descriptor)
    return folder / "course.yaml", channel


def submission(folder: Path, source: str) -> Path:
    """The submission of ``source`` (:data:`SENDER` or :data:`RECEIVER`, formatted) in ``folder``."""
    (folder / "toy").mkdir(parents=True)
    (folder / "toy" / "__init__.py").write_text("")
    (folder / "toy" / "ex_sum.py").write_text(source)
    return folder


# What remains with every call above refused: the time a read takes. The sender can load pages
# (a read) but no longer evict them, so each page of a file that is not yet cached carries one
# bit, once; the receiver times touching each page (mmap + MADV_RANDOM, which the filter keeps,
# so that a fault reads that page only). ``python -m tests.isolation.page_cache`` measures it here.
TIMING_COMMON = '''
import mmap, os, sys, time
sys.path.insert(0, {inside!r})
import seccomp
seccomp.restrict(pid_namespace=True)
fd = os.open({channel!r}, os.O_RDONLY)
memory = mmap.mmap(fd, {pages} * mmap.PAGESIZE, prot=mmap.PROT_READ)
memory.madvise(mmap.MADV_RANDOM)
'''

TIMING_SENDER = TIMING_COMMON + '''
for page in range({pages}):
    if {secret} >> page & 1:
        memory[page * mmap.PAGESIZE]
'''

TIMING_RECEIVER = TIMING_COMMON + '''
took = []
began = time.perf_counter_ns()
for page in range({pages}):
    start = time.perf_counter_ns()
    memory[page * mmap.PAGESIZE]
    took.append(time.perf_counter_ns() - start)
print(time.perf_counter_ns() - began, *took)
'''


def timing(rounds: int = 20, pages: int = 256, folder: Path | None = None) -> dict[str, float]:
    """Send ``rounds`` random words of ``pages`` bits through the cache of a fresh file, each
    sender and receiver in a process of its own under a worker's filter: how many bits arrive
    right (a page is taken as cached when touching it took less than the cut between two
    clusters of the times' logarithms, found as 2-means finds it), and at what rate."""
    import os
    import random
    import subprocess
    import sys
    import tempfile

    inside = str(ROOT / "autograder" / "isolation" / "inside")
    right = total = 0
    seconds = 0.0
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        channel = Path(scratch) / "channel.bin"
        for _ in range(rounds):
            channel.write_bytes(random.randbytes(pages * 4096))
            descriptor = os.open(channel, os.O_RDONLY)
            os.fsync(descriptor)
            os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)  # the driver, unconfined, starts cold
            os.close(descriptor)
            secret = random.getrandbits(pages)
            names = {"inside": inside, "channel": str(channel), "pages": pages, "secret": secret}
            subprocess.run([sys.executable, "-c", TIMING_SENDER.format(**names)], check=True)
            said = subprocess.run([sys.executable, "-c", TIMING_RECEIVER.format(**names)], check=True,
                                  capture_output=True, text=True).stdout.split()
            elapsed, took = int(said[0]), list(map(int, said[1:]))
            cut = _cut([math.log(max(time, 1)) for time in took])
            right += sum((took[page] < cut) == bool(secret >> page & 1) for page in range(pages))
            total += pages
            seconds += elapsed / 1e9
    return {"bits": total, "right": right / total, "bits per second of probing": total / seconds}


def _cut(values: list[float]) -> float:
    """The value that splits ``values`` into two clusters, each nearer its own mean (2-means)."""
    cut = (min(values) + max(values)) / 2
    for _ in range(20):
        low, high = [v for v in values if v < cut], [v for v in values if v >= cut]
        if not low or not high:
            break
        cut = (sum(low) / len(low) + sum(high) / len(high)) / 2
    return math.exp(cut)


if __name__ == "__main__":
    print(timing())
