#!/usr/bin/env python3
"""The Python module's overhead per call against the CLI on the same case (scripts/bench --python).

Alternates, `--repetitions` times: the CLI, `specwave forward --quiet CASE --output-dir TMP` (a process: start, plan,
run, HDF5 and PNG outputs; its run.json gives the run's own seconds), and `specwave.forward(case)` in this process
(plan and run, arrays out). Prints the best of each and the Python call's time over the CLI run's own seconds, the
overhead that matters when a script calls the engine in a loop.
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

import specwave

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True, help="the specwave program")
    parser.add_argument("--case", default=os.path.join(ROOT, "cases", "validation", "small.toml"))
    parser.add_argument("--repetitions", type=int, default=5)
    args = parser.parse_args()
    case = specwave.Case.from_file(args.case)
    plan = case.plan()
    cli_wall, cli_run, py_wall = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.repetitions):
            out = os.path.join(tmp, f"out{k}")
            t = time.perf_counter()
            subprocess.run([args.cli, "forward", "--quiet", args.case, "--output-dir", out], check=True,
                           stdout=subprocess.DEVNULL)
            cli_wall.append(time.perf_counter() - t)
            with open(os.path.join(out, "run.json")) as f:
                cli_run.append(json.load(f)["seconds"])
            t = time.perf_counter()
            specwave.forward(case)
            py_wall.append(time.perf_counter() - t)
    a, b, c = min(cli_wall), min(cli_run), min(py_wall)
    print(f"case {case.name}: grid {case.shape}, {case.n_shots} shot(s), {plan.nt} steps, {case.precision}, "
          f"best of {args.repetitions} alternating")
    print(f"  CLI `specwave forward` process wall time  {a:8.3f} s")
    print(f"  CLI run's own seconds (run.json)          {b:8.3f} s")
    print(f"  Python specwave.forward(case)             {c:8.3f} s")
    print(f"  Python call - CLI run seconds: {c - b:+.3f} s ({c / b:.3f}x); Python call / CLI process: {c / a:.3f}x")


if __name__ == "__main__":
    main()
