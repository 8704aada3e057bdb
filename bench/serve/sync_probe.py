"""Times the disk alone as one SQLite WAL commit of a trace uses it.

    python3 bench/serve/sync_probe.py PATH [ITERATIONS] [--all]

Each iteration writes 7 WAL-style frames (a 24-byte header and a 4 KiB page,
two pwrite calls each, as SQLite does) and fsyncs, like one trace commit
under `synchronous=FULL`. Prints p50/p90/p99 wall time and the CPU time per
iteration (on ext4 most of an fsync is kernel CPU, not waiting). PATH is
created and removed.

With --all it also times cheaper ways to make the same 28 KiB durable, to
show where the floor is: fdatasync instead of fsync; the file allocated
beforehand (no size change to journal); one write of 28 KiB with O_DSYNC;
and O_DIRECT|O_DSYNC, 28 KiB and a single 4 KiB block (the least any
durable commit can write). O_DIRECT is skipped where the filesystem refuses
it (tmpfs).
"""

import mmap
import os
import sys
import time

FRAME = 4096 + 24
FRAMES = 7
WAL_BYTES = 4 << 20  # a WAL is reset after each checkpoint


def timed(label, n, step):
    times = []
    cpu0 = time.process_time()
    for i in range(n):
        t = time.perf_counter()
        step(i)
        times.append(time.perf_counter() - t)
    cpu = (time.process_time() - cpu0) / n
    times.sort()

    def q(p):
        return times[min(len(times) - 1, int(len(times) * p))] * 1e6

    print(
        f"{label}: p50 {q(0.5):.0f} µs, p90 {q(0.9):.0f} µs, "
        f"p99 {q(0.99):.0f} µs; CPU {cpu * 1e6:.0f} µs per commit ({n} commits)"
    )


def open_new(path, extra=0):
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | extra, 0o600)


def wal_like(path, n, sync, preallocate):
    """7 frames (two pwrite each), then `sync`: what SQLite does."""
    fd = open_new(path)
    try:
        if preallocate:
            os.pwrite(fd, b"\0" * (WAL_BYTES + FRAMES * FRAME), 0)
            os.fsync(fd)
        page = os.urandom(4096)
        off = [0]

        def step(_):
            for _ in range(FRAMES):
                os.pwrite(fd, page[:24], off[0])
                os.pwrite(fd, page, off[0] + 24)
                off[0] += FRAME
            sync(fd)
            if off[0] > WAL_BYTES:
                off[0] = 0

        name = "fsync" if sync is os.fsync else "fdatasync"
        where = "into an allocated file" if preallocate else "appended"
        timed(f"sync probe {path}: {FRAMES} frames + {name}, {where}", n, step)
    finally:
        os.close(fd)
        os.unlink(path)


def one_write(path, n, flags, size, label):
    """One write of `size` bytes per commit through `flags` (O_DSYNC...)."""
    slots = WAL_BYTES // size
    fd = open_new(path)
    try:
        os.pwrite(fd, b"\0" * (slots * size), 0)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        try:
            fd = os.open(path, os.O_RDWR | flags)
        except OSError as e:
            print(f"sync probe {path}: {label}: not supported here ({e.strerror})")
            return
        try:
            # O_DIRECT wants an aligned buffer: an anonymous map is one.
            buf = mmap.mmap(-1, size)
            buf.write(os.urandom(size))
            try:
                os.pwritev(fd, [buf], 0)
            except OSError as e:
                print(f"sync probe {path}: {label}: not supported here ({e.strerror})")
                return
            timed(
                f"sync probe {path}: {label}",
                n,
                lambda i: os.pwritev(fd, [buf], (i % slots) * size),
            )
        finally:
            os.close(fd)
    finally:
        os.unlink(path)


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--all"]
    every = "--all" in sys.argv[1:]
    path = args[0]
    n = int(args[1]) if len(args) > 1 else 3000
    wal_like(path, n, os.fsync, preallocate=False)
    if not every:
        return
    wal_like(path, n, os.fdatasync, preallocate=False)
    wal_like(path, n, os.fdatasync, preallocate=True)
    size = FRAMES * 4096
    one_write(path, n, os.O_DSYNC, size, f"one {size // 1024} KiB write, O_DSYNC")
    direct = getattr(os, "O_DIRECT", 0)
    if direct:
        one_write(path, n, direct | os.O_DSYNC, size, f"one {size // 1024} KiB write, O_DIRECT|O_DSYNC")
        one_write(path, n, direct | os.O_DSYNC, 4096, "one 4 KiB block, O_DIRECT|O_DSYNC")


if __name__ == "__main__":
    main()
