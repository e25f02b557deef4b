"""Seeded mutations of SWF files through `pbf trace info` and `pbf replay --out` (the CLI in-process).

    python tests/fuzz_swf.py [--cases 2000] [--seed 0] [--memory-gb 1]

Every case must end in exit 0 with the jobs conserved (records read = dropped + jobs; jobs =
completed + rejected), or exit 2 with one `pbf: error:` line that names the file; never an exception,
never past the memory limit (RLIMIT_AS, and the peak RSS is reported). Prints a JSON report; exit 1
on any failure. tests/test_fuzz.py runs it with a few hundred cases.
"""
import argparse
import contextlib
import gzip
import io
import json
import os
import random
import resource
import sys
import tempfile
import time
import traceback
from pathlib import Path

BASE = Path(__file__).resolve().parents[1] / "traces" / "lublin1-1000.swf.gz"
TOKENS = ["", "x", "nan", "inf", "-inf", "1e400", "1e18", "9223372036854775808", "-9223372036854775809",
          "2147483648", "100000000000", "-5", "0", "-1", "12.5", "1e-300", "0x10", "١٢", "\x00", "3" * 40]
HEADER_KEYS = ["MaxProcs", "MaxNodes", "UnixStartTime", "MaxRuntime", "Version", "MaxRecords", "TimeZone"]
# the archive's annotated header values (a number, then a note), and near misses that must be refused
ANNOTATED = ["64 (batch partition; 512 total)", "256 (48 interactive, 352 batch, 6 service, 10 I/O)",
             "128  ( 6,  171,   7)", "64[4 service]", "64abc", "(64)", "inf (none)", "1e400 (big)",
             "9223372036854775808 (2^63)", "0 (none)", "-64 (negative)", "64 (", "١٢٨ (arabic digits)"]


def mutate(rng, header, records):
    """A mutated copy of the file's lines (header lines, then records) and how to store it."""
    header, records = list(header), list(records)
    for _ in range(rng.randint(1, 2)):
        op = rng.randrange(9)
        if op == 0 and records:                               # one field becomes a hostile token
            i = rng.randrange(len(records))
            fields = records[i].split()
            fields[rng.randrange(len(fields))] = rng.choice(TOKENS)
            records[i] = " ".join(fields)
        elif op == 1 and records:                             # a field is lost or one too many
            i = rng.randrange(len(records))
            fields = records[i].split()
            if rng.random() < 0.5 and fields:
                del fields[rng.randrange(len(fields))]
            else:
                fields.insert(rng.randrange(len(fields) + 1), str(rng.randint(0, 9)))
            records[i] = " ".join(fields)
        elif op == 2 and len(records) > 2:                    # submit times out of order
            i, j = rng.randrange(len(records)), rng.randrange(len(records))
            records[i], records[j] = records[j], records[i]
        elif op == 3:                                         # the cluster size in the header
            header = [h for h in header if "MaxProcs" not in h and "MaxNodes" not in h]
            header.append(f"; {rng.choice(['MaxProcs', 'MaxNodes'])}: {rng.choice(TOKENS + ANNOTATED + ['64', '256'])}")
        elif op == 4:                                         # another header line
            header.append(f"; {rng.choice(HEADER_KEYS)}: {rng.choice(TOKENS + ANNOTATED)}")
        elif op == 5 and records:                             # garbage bytes inside a record
            i = rng.randrange(len(records))
            k = rng.randrange(len(records[i]) + 1)
            records[i] = records[i][:k] + rng.choice(["\x00\x01", "\xff", "\t\t", ";", "#", "\r"]) + records[i][k:]
        elif op == 6 and records:                             # a huge job
            i = rng.randrange(len(records))
            fields = records[i].split()
            if len(fields) == 18:
                fields[4] = fields[7] = rng.choice(["2147483648", "16777217", "100000000", "0"])
                records[i] = " ".join(fields)
        elif op == 7:                                         # fewer records
            records = records[: rng.randrange(len(records) + 1)]
        else:                                                 # a run time or request of extremes
            if records:
                i = rng.randrange(len(records))
                fields = records[i].split()
                if len(fields) == 18:
                    fields[rng.choice([3, 8])] = rng.choice(["0", "-1", "4611686018427387903", "1"])
                    records[i] = " ".join(fields)
    text = "\n".join(header + records) + ("\n" if rng.random() < 0.8 else "")
    data = text.encode("utf-8", "surrogateescape")
    how = rng.choice(["plain", "gzip", "gzip-truncated", "plain-truncated"])
    if how.startswith("gzip"):
        data = gzip.compress(data, mtime=0)
    if how.endswith("truncated") and len(data) > 10:
        data = data[: rng.randrange(1, len(data))]
    return data, how


def run_case(main, path, out_dir):
    """Both commands on one file; returns a problem description or None."""
    for argv in (["trace", "info", str(path)], ["replay", str(path), "--out", str(out_dir), "--quiet", "--json"]):
        err, out = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                code = main(argv)
        except SystemExit as exc:            # argparse
            code = exc.code
        except BaseException:                # noqa: BLE001 - the finding itself
            return f"{argv[0]}: exception\n{traceback.format_exc()}"
        lines = [ln for ln in err.getvalue().splitlines() if ln.strip()]
        if code == 2:
            if len(lines) != 1 or not lines[0].startswith("pbf: error: ") or str(path) not in lines[0]:
                return f"{argv[0]}: exit 2 without one 'pbf: error:' line naming the file: {lines!r}"
            if argv[0] == "replay" and os.path.exists(out_dir):
                return f"replay: exit 2 but {out_dir} was written"
            return None                      # (info refused the file: so will replay)
        if code != 0:
            return f"{argv[0]}: exit {code}: {lines!r}"
        if argv[0] == "replay":
            s = json.loads(out.getvalue())
            c, j = s["cleaning"], s["jobs"]
            dropped = (c["dropped_missing_submit"] + c["dropped_nonpositive_runtime"]
                       + c["dropped_nonpositive_units"] + c["oversize_dropped"])
            if c["records_read"] != dropped + c["jobs"] or c["jobs"] != j["submitted"] \
                    or j["submitted"] != j["completed"] + j["rejected"]:
                return f"replay: jobs not conserved: {c} {j}"
            if not (Path(out_dir) / "summary.json").exists():
                return "replay: exit 0 without summary.json"
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--memory-gb", type=float, default=1.0, help="address-space limit beyond the start-up size")
    args = ap.parse_args(argv)
    from pbf.cli import main as pbf_main
    base_lines = gzip.decompress(BASE.read_bytes()).decode().splitlines()
    header = [ln for ln in base_lines if ln.startswith(";")]
    records = [ln for ln in base_lines if ln.strip() and not ln.startswith(";")][:150]
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    # the limit counts from what the process already maps (numpy and the compiled core included)
    with open("/proc/self/statm") as fh:
        mapped = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    limit = mapped + int(args.memory_gb * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    rng = random.Random(args.seed)
    problems, outcomes = [], {"ok": 0, "refused": 0}
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for case in range(args.cases):
            data, how = mutate(rng, header, records)
            path = Path(tmp) / f"case{case}.swf{'.gz' if how.startswith('gzip') else ''}"
            path.write_bytes(data)
            out_dir = Path(tmp) / f"out{case}"
            problem = run_case(pbf_main, path, out_dir)
            if problem:
                problems.append({"case": case, "how": how, "problem": problem})
            else:
                outcomes["ok" if out_dir.exists() else "refused"] += 1
    report = {"cases": args.cases, "seed": args.seed, **outcomes, "problems": problems,
              "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
              "address_space_limit_mb": limit / (1 << 20), "wall_s": time.perf_counter() - t0}
    print(json.dumps(report, indent=2))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
