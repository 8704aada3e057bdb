"""Times the disk alone as one SQLite WAL commit of a trace uses it.

    python3 bench/serve/sync_probe.py PATH [ITERATIONS]

Each iteration writes 7 WAL-style frames (a 24-byte header and a 4 KiB page,
two pwrite calls each, as SQLite does) and fsyncs, like one trace commit
under `synchronous=FULL`. Prints p50/p90/p99 wall time and the CPU time per
iteration (on ext4 most of an fsync is kernel CPU, not waiting). PATH is
created and removed.
"""

import os
import sys
import time


def main() -> None:
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        page = os.urandom(4096)
        times = []
        off = 0
        cpu0 = time.process_time()
        for _ in range(n):
            t = time.perf_counter()
            for _ in range(7):
                os.pwrite(fd, page[:24], off)
                os.pwrite(fd, page, off + 24)
                off += 4096 + 24
            os.fsync(fd)
            times.append(time.perf_counter() - t)
            if off > 4 << 20:  # a WAL is reset after each checkpoint
                off = 0
        cpu = (time.process_time() - cpu0) / n
    finally:
        os.close(fd)
        os.unlink(path)
    times.sort()
    q = lambda p: times[min(len(times) - 1, int(len(times) * p))] * 1e6  # noqa: E731
    print(
        f"sync probe {path}: 7 frames + fsync: p50 {q(0.5):.0f} µs, p90 {q(0.9):.0f} µs, "
        f"p99 {q(0.99):.0f} µs; CPU {cpu * 1e6:.0f} µs per commit ({n} commits)"
    )


if __name__ == "__main__":
    main()
