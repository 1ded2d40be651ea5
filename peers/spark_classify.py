#!/usr/bin/env python3
"""`classify` as a stage of Apache Spark: a dataset CSV too big for one machine, classified by many `classify`
processes, each fed one partition through standard input (`classify shape|motion --dataset -`).

Spark splits a text file by bytes, and so does this job, but never inside an item: the driver moves each of the
`--partitions` equal byte splits forward to the first row of the next drawing (or recording), reading a few
kilobytes per split. Each Spark task then streams its byte range from the file, the CSV header first, into one
`classify … --dataset -` process in large blocks (no row passes through Python one at a time) and writes that
process's answers as its part file. The parts, concatenated in partition order, are what one process gives for the
whole file, line for line (--check compares them with `cmp`), with one exception: an error about a bad row names
its line counted from the start of that partition's range.

Each item's rows must be together in the file (a shape dataset requires it; generated data and a file sorted by
its first column have it). A motion session whose rows are scattered would be cut into two sessions: the job finds
an item answered by two partitions and fails (exit 65) rather than give such answers.

On a cluster the same job runs with a cluster master (`--master spark://host:7077`): the input and the output
folder on storage every worker reads at the same path (NFS, or a mounted bucket; for HDFS or S3 open the ranges with
pyarrow.fs instead of `open`), and `classify` at the same path on every worker (the release build, or `make
install`). The partitions are spread over the workers' cores.

Optional, never part of `make test`; see peers/README.md for the venv (pyspark; Java 17).

    spark_classify.py shape --input drawings.csv [--partitions 8] [--workers 2] [--out answers.jsonl] [--check]
    spark_classify.py generate-shape --count 1000000 --out drawings.csv      # the data, with classify generate
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DEFAULT_CLASSIFY = os.path.join(ROOT, ".build", "release", "classify")


def item_id(line):
    """The item a dataset row belongs to: its first column (drawing or session)."""
    return line.split(b",", 1)[0]


def split_points(path, partitions):
    """Byte offsets 0 = p₀ < p₁ < … < p_k = size (k ≤ partitions): after the header, every split at a row that
    starts a new item, each at or after an equal share of the file."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        header = f.readline()
        points = [len(header)]
        for k in range(1, partitions):
            f.seek(max(points[-1], size * k // partitions))
            if f.tell() > len(header):
                f.readline()  # the rest of the row the split fell in
            line = f.readline()
            if not line:
                break
            key = item_id(line)
            while True:  # forward to the next item's first row
                offset = f.tell()
                line = f.readline()
                if not line:
                    offset = size
                    break
                if item_id(line) != key:
                    break
            if offset > points[-1] and offset < size:
                points.append(offset)
        points.append(size)
    return header, points


def classify_range(path, header, start, end, command, out_path):
    """Streams bytes start..<end of `path`, after `header`, through `command`; its answers go to `out_path`.
    Returns (answers, seconds, exit status): a bad item is answered by an error in its place and the rest goes on,
    as in one process, whose exit status is then the first failure's."""
    started = time.perf_counter()
    with open(out_path, "wb") as out:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=out, cwd=ROOT)
        try:
            with open(path, "rb") as f:
                f.seek(start)
                process.stdin.write(header)
                left = end - start
                while left > 0:
                    block = f.read(min(left, 1 << 20))
                    if not block:
                        break
                    process.stdin.write(block)
                    left -= len(block)
            process.stdin.close()
        except BrokenPipeError:
            pass  # classify stopped reading (a bad header, say): its status and message say why
        finally:
            status = process.wait()
    with open(out_path, "rb") as answers:
        count = sum(block.count(b"\n") for block in iter(lambda: answers.read(1 << 20), b""))
    return count, time.perf_counter() - started, status


def classify_command(classify, task, json_output):
    """The command each partition is piped through (and the one process --check runs)."""
    command = [classify, task, "--dataset", "-", "--jobs", "1"]
    return command + (["--json"] if json_output else [])


INPUT_JSON = re.compile(rb'"input":"((?:[^"\\]|\\.)*)"')


def split_item(answers, json_output):
    """The first item that two partitions answered (its name), or None. One process answers each item once, so an
    item answered twice had its rows cut apart by a split."""
    seen = set()
    with open(answers, "rb") as f:
        for line in f:
            found = INPUT_JSON.search(line) if json_output else None
            name = found.group(1) if found else line.split(b"  ", 1)[0]
            if b"#" not in name:
                continue  # an error about the whole input (a bad header), not an item's answer
            if name in seen:
                return name.decode("utf-8", "replace")
            seen.add(name)
    return None


def run_spark(args):
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(args.master or f"local[{args.workers}]")
        .appName(f"classify {args.task}")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    path = os.path.abspath(args.input)
    started = time.perf_counter()
    header, points = split_points(path, args.partitions)
    ranges = list(zip(points, points[1:]))
    command = classify_command(args.classify, args.task, args.json)
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(args.out))) as folder:
        parts = [os.path.join(folder, f"part-{index:05d}") for index in range(len(ranges))]
        jobs = spark.sparkContext.parallelize(list(zip(ranges, parts)), len(ranges))
        results = jobs.map(lambda job: classify_range(path, header, job[0][0], job[0][1], command, job[1])).collect()
        with open(args.out, "wb") as out:
            for part in parts:
                with open(part, "rb") as answers:
                    for block in iter(lambda: answers.read(1 << 20), b""):
                        out.write(block)
    elapsed = time.perf_counter() - started
    spark.stop()
    status = next((status for _, _, status in results if status != 0), 0)
    reason = "the first failing partition's" if status else ""
    split = split_item(args.out, json_output=args.json)
    if split is not None:
        print(f"error: {split} is answered by two partitions: its rows are not together in {args.input}; sort the file "
              "by its first column (keeping each item's rows in order) and run again", file=sys.stderr)
        status, reason = 65, "an item cut apart"
    return sum(r[0] for r in results), len(ranges), elapsed, [r[1] for r in results], status, reason


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task", choices=["shape", "motion", "generate-shape", "generate-motion"])
    parser.add_argument("--input", help="the dataset CSV (drawing,label,stroke,x,y[,t] or session,label,timestamp,…)")
    parser.add_argument("--out", help="where the answers go, one line per item in input order")
    parser.add_argument("--partitions", type=int, default=8, help="Spark partitions of the input (default 8)")
    parser.add_argument("--workers", type=int, default=2, help="local worker threads, local[N] (default 2)")
    parser.add_argument("--master", help="a Spark master URL instead of local[N] (a cluster)")
    parser.add_argument("--classify", default=DEFAULT_CLASSIFY, help="the classify executable (every worker's path)")
    parser.add_argument("--text", dest="json", action="store_false", help="text answers instead of --json")
    parser.add_argument("--check", action="store_true", help="also run one classify process on the whole file and cmp")
    parser.add_argument("--count", type=int, help="generate-*: training drawings, or simulated people (3 recordings each)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    if args.task.startswith("generate-"):
        task = args.task.split("-", 1)[1]
        if not args.count or not args.out:
            parser.error("generate-* needs --count and --out")
        with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(args.out))) as folder:
            subprocess.run([args.classify, "generate", task, "--out", folder, "--count", str(args.count),
                            "--seed", str(args.seed)], check=True)
            os.replace(os.path.join(folder, "shapes" if task == "shape" else "motion", "train.csv"), args.out)
        return 0
    if not args.input or not args.out:
        parser.error(f"{args.task} needs --input and --out")
    if not os.access(args.classify, os.X_OK):
        parser.error(f"{args.classify} is not an executable: build it (swift build -c release --product classify)")

    count, partitions, elapsed, seconds, status, reason = run_spark(args)
    print(f"spark: {count:,} answers from {partitions} partitions on {args.master or f'local[{args.workers}]'} in "
          f"{elapsed:.1f} s: {count / elapsed:,.0f} items/s (a partition's classify took {min(seconds):.1f}–"
          f"{max(seconds):.1f} s)" + (f"; exit {status}, {reason}" if status else ""))
    if not args.check:
        return status
    single = args.out + ".single"
    started = time.perf_counter()
    with open(args.input, "rb") as source, open(single, "wb") as out:
        # One process on every core (classify's default), as a user without Spark would run it.
        command = [args.classify, args.task, "--dataset", "-"] + (["--json"] if args.json else [])
        single_status = subprocess.run(command, stdin=source, stdout=out, cwd=ROOT).returncode
    elapsed = time.perf_counter() - started
    print(f"one process: {elapsed:.1f} s, {count / elapsed:,.0f} items/s, exit {single_status}")
    same = subprocess.run(["cmp", args.out, single]).returncode == 0 and single_status == status
    print("cmp: identical, line for line, and the same exit status" if same else "cmp: DIFFERENT")
    return status if same else 1


if __name__ == "__main__":
    sys.exit(main())
