#!/usr/bin/env python3
"""What a table kept in memory costs before a byte is decoded: the first write to each 4 KiB
page of fresh memory is a page fault (the kernel maps and zeroes the page), paid by whoever
fills the memory first, whichever reader it is. This measures the machine's cost per page and
sets it beside avrow's one-thread read of each file into a `pyarrow.Table`:

    python3 benches/fault_cost.py [--mb 400] [--rounds 5] [FILE.avro ...]

Per round: an anonymous map of `--mb` MiB is written once per page (faults) and again (no
faults: the loop's own cost, subtracted), then unmapped. Per file: the table's bytes, the page
faults a read takes (`getrusage`'s minor faults; fewer pages than the table's when the
allocator reuses memory the previous round freed), the time those faults cost at the measured
rate, and avrow's median read time, so that the share of the read that is first-touch faults
is visible. A target such as
"5× the fastest peer" cannot be met on files whose fault time alone is above a fifth of that
peer's time.
"""
import argparse
import mmap
import resource
import statistics
import time

PAGE = 4096


def fault_cost(mb, rounds):
    """Median seconds per page of a first write, minus a second write's loop cost."""
    n = mb << 20
    costs = []
    for _ in range(rounds):
        m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        start = time.perf_counter()
        for i in range(0, n, PAGE):
            m[i] = 1
        first = time.perf_counter() - start
        start = time.perf_counter()
        for i in range(0, n, PAGE):
            m[i] = 2
        again = time.perf_counter() - start
        m.close()
        costs.append((first - again) / (n // PAGE))
    return statistics.median(costs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--mb", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    per_page = fault_cost(args.mb, args.rounds)
    print(f"first write to a fresh 4 KiB page: {per_page * 1e6:.2f} µs "
          f"({args.mb} MiB, median of {args.rounds})")
    if not args.files:
        return
    import avrow

    print()
    print("| file | table MB | table pages | page faults a read | their cost s | avrow read s "
          "| faults / read |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for path in args.files:
        times, faults = [], []
        nbytes = 0
        for _ in range(args.rounds):
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            start = time.perf_counter()
            table = avrow.read_avro(path, threads=1)
            times.append(time.perf_counter() - start)
            faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
            nbytes = table.nbytes
            del table
        read = statistics.median(times)
        n = statistics.median(faults)
        cost = n * per_page
        print(f"| {path.rsplit('/', 1)[-1]} | {nbytes / 1e6:.0f} | {nbytes // PAGE} | {n:.0f} "
              f"| {cost:.3f} | {read:.3f} | {cost / read:.0%} |")


if __name__ == "__main__":
    main()
