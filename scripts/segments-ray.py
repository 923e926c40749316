#!/usr/bin/env python3
"""Scores (distorted, reference) pairs in segments on a Ray cluster and merges each title exactly:
every title's log equals a single `vmaf-rs` run's (docs/SEGMENTS.md).

    scripts/segments-ray.py --pair DIS REF [--pair DIS REF ...] --out-dir DIR
        [--address HOST:PORT] [--num-cpus N] [--segments K] [--retries R]
        [--json|--xml|--csv|--sub] [--reproducible] [-- VMAF_RS_OPTIONS...]

Each title is probed (its frame table, `scripts/segment.sh probe`), cut into K segments (default:
the cluster's CPUs), and every segment is a Ray task running `scripts/segment.sh run` (ffmpeg
decodes exactly its frames, `vmaf-rs --segment` scores them); the task returns the partial log's
text, so workers need the inputs and the programs but no shared output directory. A segment whose
task fails (vmaf-rs or ffmpeg failed, or its worker process died) is submitted again, up to R times
(default 2). When a title's parts are in, `vmaf-rs merge` writes DIR/<title>.<fmt> here; the
parts stay in DIR/<title>.parts/. A summary per title closes the run; the exit status is non-zero
if any title failed.

Without --address a local Ray is started (--num-cpus workers). Run it with the venv that
scripts/ray-env.sh makes (this script re-runs itself there when `ray` is missing). Programs:
VMAF_RS_BIN, FFMPEG (scripts/segment.sh), the same paths on every worker.

Testing aids: --pid-dir D makes every task write D/<title>.<segment>.<attempt>.pid (its worker
process id) when it starts, and --hold S makes first attempts wait S seconds after that, so a test
can kill a worker in the middle of a segment.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

try:
    import ray
except ImportError:
    if os.environ.get("VMAF_RS_RAY_REEXEC"):
        sys.exit("segments-ray: ray is missing even in the venv of scripts/ray-env.sh")
    py = subprocess.run(
        [os.path.join(HERE, "ray-env.sh")], check=True, stdout=subprocess.PIPE, text=True
    ).stdout.strip()
    os.environ["VMAF_RS_RAY_REEXEC"] = "1"
    os.execv(py, [py, os.path.abspath(__file__)] + sys.argv[1:])


def tool_env(tools):
    """The environment a task runs scripts/segment.sh in."""
    env = dict(os.environ)
    env.update({k: v for k, v in tools.items() if v})
    return env


def tail(text, n=2000):
    return text if len(text) <= n else "..." + text[-n:]


@ray.remote(num_cpus=1, max_retries=0)
def probe_task(segment_sh, path, tools):
    """The frame table of one video (runs where the video is readable)."""
    p = subprocess.run(
        [segment_sh, "probe", path],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=tool_env(tools),
    )
    if p.returncode != 0:
        raise RuntimeError(f"probe {path} failed: {tail(p.stderr)}")
    return p.stdout


@ray.remote(num_cpus=1, max_retries=0)
def segment_task(job, tools, opts, pid_dir, hold):
    """Scores one segment; returns its partial log's text and where it ran."""
    import socket

    t0 = time.time()
    if pid_dir:
        name = f"{job['title']}.{job['index']}.{job['attempt']}.pid"
        with open(os.path.join(pid_dir, name + ".tmp"), "w") as f:
            f.write(str(os.getpid()))
        os.rename(os.path.join(pid_dir, name + ".tmp"), os.path.join(pid_dir, name))
    if hold and job["attempt"] == 0:
        time.sleep(hold)
    with tempfile.TemporaryDirectory(prefix="vmaf-rs-seg-") as d:
        rp, dp, part = (os.path.join(d, n) for n in ("ref.probe", "dis.probe", "part.json"))
        with open(rp, "w") as f:
            f.write(job["ref_probe"])
        with open(dp, "w") as f:
            f.write(job["dis_probe"])
        cmd = [
            job["segment_sh"], "run", "-r", job["ref"], "-d", job["dis"],
            "-s", str(job["start"]), "-e", str(job["end"]), "-o", part,
            "--ref-probe", rp, "--dis-probe", dp, "--title-frames", str(job["frames"]),
            "--", "-q",
        ] + list(opts)
        p = subprocess.run(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=tool_env(tools)
        )
        if p.returncode != 0:
            raise RuntimeError(
                f"segment [{job['start']}, {job['end']}) failed (exit {p.returncode}): "
                f"{tail(p.stderr)}"
            )
        with open(part) as f:
            text = f.read()
    return {
        "part": text,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "seconds": time.time() - t0,
    }


def plan(n, k):
    """K segments tiling n frames (as scripts/segment.sh plan)."""
    k = max(1, min(k, n))
    return [(i * n // k, (i + 1) * n // k) for i in range(k)]


class Title:
    def __init__(self, dis, ref, out_dir, ext):
        base = os.path.splitext(os.path.basename(dis))[0]
        self.name = base
        self.dis, self.ref = os.path.abspath(dis), os.path.abspath(ref)
        self.log = os.path.join(out_dir, f"{base}.{ext}")
        self.parts_dir = os.path.join(out_dir, f"{base}.parts")
        self.probes = {}
        self.frames = None
        self.segments = []
        self.parts = {}
        self.retries = 0
        self.failed = None
        self.t_start = None
        self.t_scored = None
        self.merge_seconds = None
        self.scores = ""


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--pair", nargs=2, action="append", metavar=("DIS", "REF"), required=True,
                    help="a distorted video and its reference (repeatable)")
    ap.add_argument("--out-dir", required=True, help="where the merged logs go")
    ap.add_argument("--address", help="Ray cluster address (HOST:PORT); default: a local Ray")
    ap.add_argument("--num-cpus", type=int, default=os.cpu_count(),
                    help="workers of the local Ray (without --address)")
    ap.add_argument("--segments", type=int, help="segments per title (default: cluster CPUs)")
    ap.add_argument("--retries", type=int, default=2, help="new attempts of a failed segment")
    fmt = ap.add_mutually_exclusive_group()
    for f in ("json", "xml", "csv", "sub"):
        fmt.add_argument(f"--{f}", action="store_const", const=f, dest="fmt")
    ap.add_argument("--reproducible", action="store_true", help="merged logs with fps 0")
    ap.add_argument("--pid-dir", help="testing aid: tasks write their worker pid here")
    ap.add_argument("--hold", type=float, default=0.0,
                    help="testing aid: first attempts wait this long after writing their pid")
    argv = sys.argv[1:]
    opts = []
    if "--" in argv:
        i = argv.index("--")
        argv, opts = argv[:i], argv[i + 1:]
    args = ap.parse_args(argv)
    ext = args.fmt or "xml"

    segment_sh = os.path.join(HERE, "segment.sh")
    vmaf_rs = os.environ.get("VMAF_RS_BIN") or (
        os.path.join(ROOT, "target/release/vmaf-rs")
        if os.path.exists(os.path.join(ROOT, "target/release/vmaf-rs"))
        else shutil.which("vmaf-rs")
    )
    if not vmaf_rs:
        sys.exit("segments-ray: no vmaf-rs (cargo build --release, or set VMAF_RS_BIN)")
    tools = {"VMAF_RS_BIN": vmaf_rs, "FFMPEG": os.environ.get("FFMPEG", "")}
    os.makedirs(args.out_dir, exist_ok=True)

    t_run = time.time()
    if args.address:
        ray.init(address=args.address, logging_level="WARNING", log_to_driver=False)
    else:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False, logging_level="WARNING",
                 log_to_driver=False)
    cpus = int(ray.cluster_resources().get("CPU", 1))
    k = args.segments or cpus
    print(f"segments-ray: Ray {ray.__version__}, {cpus} CPUs, {len(ray.nodes())} node(s); "
          f"{len(args.pair)} title(s), {k} segments each", flush=True)

    def log(msg):
        print(f"[{time.time() - t_run:7.2f}s] {msg}", flush=True)

    titles = [Title(d, r, args.out_dir, ext) for d, r in args.pair]
    names = [t.name for t in titles]
    if len(set(names)) != len(names):
        sys.exit("segments-ray: two distorted videos share a base name; their logs would collide")

    pending = {}  # ObjectRef -> (kind, title, job)

    def submit_probe(t, which, attempt):
        path = t.ref if which == "ref" else t.dis
        ref = probe_task.remote(segment_sh, path, tools)
        pending[ref] = ("probe", t, {"which": which, "attempt": attempt})

    def submit_segment(t, job):
        ref = segment_task.remote(job, tools, opts, args.pid_dir, args.hold)
        pending[ref] = ("segment", t, job)

    for t in titles:
        t.t_start = time.time()
        submit_probe(t, "ref", 0)
        submit_probe(t, "dis", 0)

    done_segments = 0
    total_segments = 0
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        ref = ready[0]
        kind, t, job = pending.pop(ref)
        if t.failed:
            continue
        try:
            result = ray.get(ref)
        except Exception as e:  # a task's error or its worker's death (ray.exceptions.*)
            what = (f"probe of the {job['which']}" if kind == "probe"
                    else f"segment {job['index'] + 1}/{len(t.segments)} "
                         f"[{job['start']}, {job['end']})")
            reason = type(e).__name__ + ": " + tail(str(e).strip().splitlines()[-1]
                                                     if str(e).strip() else "", 300)
            if job["attempt"] < args.retries:
                t.retries += 1
                log(f"{t.name}: {what} failed ({reason}); retry {job['attempt'] + 1}"
                    f"/{args.retries}")
                if kind == "probe":
                    submit_probe(t, job["which"], job["attempt"] + 1)
                else:
                    submit_segment(t, dict(job, attempt=job["attempt"] + 1))
            else:
                t.failed = f"{what} failed {job['attempt'] + 1} times: {reason}"
                log(f"{t.name}: FAILED: {t.failed}")
                for r, (_, tt, _) in list(pending.items()):
                    if tt is t:
                        ray.cancel(r, force=True)
            continue
        if kind == "probe":
            t.probes[job["which"]] = result
            if len(t.probes) < 2:
                continue
            nr = len(t.probes["ref"].splitlines()) - 1
            nd = len(t.probes["dis"].splitlines()) - 1
            if nr != nd or nr <= 0:
                t.failed = f"the reference has {nr} frames, the distorted video {nd}"
                log(f"{t.name}: FAILED: {t.failed}")
                continue
            t.frames = nr
            t.segments = plan(nr, k)
            total_segments += len(t.segments)
            log(f"{t.name}: {nr} frames, {len(t.segments)} segments")
            for i, (a, b) in enumerate(t.segments):
                submit_segment(t, {
                    "title": t.name, "index": i, "attempt": 0, "start": a, "end": b,
                    "ref": t.ref, "dis": t.dis, "frames": nr,
                    "ref_probe": t.probes["ref"], "dis_probe": t.probes["dis"],
                    "segment_sh": segment_sh,
                })
            continue
        t.parts[job["index"]] = result["part"]
        done_segments += 1
        log(f"{t.name}: segment {job['index'] + 1}/{len(t.segments)} [{job['start']}, "
            f"{job['end']}) done on {result['host']} (pid {result['pid']}, "
            f"{result['seconds']:.2f} s, attempt {job['attempt'] + 1}); "
            f"{done_segments}/{total_segments} segments overall")
        if len(t.parts) == len(t.segments):
            t.t_scored = time.time()
            os.makedirs(t.parts_dir, exist_ok=True)
            paths = []
            for i in sorted(t.parts):
                p = os.path.join(t.parts_dir, f"part-{i}.json")
                with open(p, "w") as f:
                    f.write(t.parts[i])
                paths.append(p)
            cmd = [vmaf_rs, "merge"] + paths + ["-o", t.log, f"--{ext}"]
            if args.reproducible:
                cmd.append("--reproducible")
            m = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            t.merge_seconds = time.time() - t.t_scored
            if m.returncode != 0:
                t.failed = f"merge failed: {tail(m.stderr)}"
                log(f"{t.name}: FAILED: {t.failed}")
            else:
                t.scores = " ".join(m.stdout.split())
                log(f"{t.name}: merged into {t.log} ({t.scores})")

    print("segments-ray: summary", flush=True)
    failed = 0
    for t in titles:
        if t.failed or t.t_scored is None:
            failed += 1
            print(f"  {t.name}: FAILED ({t.failed or 'incomplete'})")
            continue
        print(f"  {t.name}: {t.frames} frames, {len(t.segments)} segments, {t.retries} "
              f"retries, scored in {t.t_scored - t.t_start:.2f} s, merged in "
              f"{t.merge_seconds:.2f} s; {t.scores}; {t.log}")
    print(f"segments-ray: {len(titles) - failed} of {len(titles)} titles in "
          f"{time.time() - t_run:.2f} s", flush=True)
    ray.shutdown()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
