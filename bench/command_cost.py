"""Wall time and peak memory of a command (make report, nbx bank refresh, ...), printed.

Peak memory is the largest resident set of any process the command waited for
(getrusage(RUSAGE_CHILDREN).ru_maxrss), which for nbx is the one Python process doing the work.
Usage: python3 bench/command_cost.py -- make report
"""
import resource
import subprocess
import sys
import time


def main(argv):
    if "--" in argv:
        argv = argv[argv.index("--") + 1:]
    if not argv:
        print(__doc__)
        return 2
    start = time.perf_counter()
    rc = subprocess.run(argv).returncode
    wall = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"command: {' '.join(argv)}\nexit: {rc}\nwall: {wall:.1f} s\npeak RSS: {peak_kib / 1024:.0f} MiB",
          file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
