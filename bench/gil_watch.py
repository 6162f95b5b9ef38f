"""Who holds the GIL while the app's UI thread is stalled: py-spy dumps taken during the stall.

    python bench/gil_watch.py HEARTBEAT_FILE PID OUT [--stale-ms 30] [--py-spy PATH]

The process under watch writes its UI thread's last tick time into HEARTBEAT_FILE (the bench's
server child does, with CAIRN_BENCH_HEARTBEAT set). This process needs nothing from the watched
one's interpreter: it polls the file every 2 ms, and when the tick is older than --stale-ms it runs
`py-spy dump --nonblocking` on PID, whose output marks the thread holding the GIL
(`active+gil`), then waits for the next tick. Investigation only: py-spy is not a dependency.
"""

from __future__ import annotations

import argparse
import mmap
import os
import struct
import subprocess
import time


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("heartbeat")
    p.add_argument("pid", type=int)
    p.add_argument("out")
    p.add_argument("--stale-ms", type=float, default=30.0)
    p.add_argument("--py-spy", default="py-spy")
    p.add_argument("--native", action="store_true", help="native frames too (slower dumps)")
    args = p.parse_args()
    fd = os.open(args.heartbeat, os.O_RDONLY)
    beat = mmap.mmap(fd, 8, prot=mmap.PROT_READ)
    cmd = [args.py_spy, "dump", "--nonblocking", "--pid", str(args.pid)] + (["--native"] if args.native else [])
    with open(args.out, "w") as out:
        while os.path.exists(f"/proc/{args.pid}"):
            (tick,) = struct.unpack("d", beat[:8])
            stale = (time.time() - tick) * 1000
            if stale > args.stale_ms:
                started = time.time()
                r = subprocess.run(cmd, capture_output=True, text=True, check=False)
                out.write(
                    f"=== DUMP tick={tick:.4f} stale_ms={stale:.1f} at={started:.4f} took_ms={(time.time() - started) * 1000:.0f}\n"
                )
                out.write(r.stdout + r.stderr)
                out.flush()
            time.sleep(0.002)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
