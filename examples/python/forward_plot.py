#!/usr/bin/env python3
"""Forward modelling from Python and a plot of the shot gather and the final wavefield (matplotlib).

    PYTHONPATH=build/python python3 examples/python/forward_plot.py [--case cases/demo/case.toml] [--out gather.png]

Runs every shot of the case in memory (no files but the PNG), prints the traces' shapes and peak amplitudes, and
plots shot 0: its gather (time down, receivers across) and a vertical slice of its final field through the source.
"""
import argparse
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import specwave  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default=os.path.join(ROOT, "cases", "demo", "case.toml"))
    parser.add_argument("--out", default="forward_plot.png")
    args = parser.parse_args()

    case = specwave.Case.from_file(args.case)
    plan = case.plan()
    print(f"case {case.name}: grid {case.shape}, dt {plan.dt:.3e} s, {plan.nt} steps, {case.n_shots} shot(s)")
    result = specwave.forward(case, final_field=True, progress="stderr")
    for s, t in zip(result.shots, result.traces):
        print(f"shot {s}: traces {t.shape} {t.dtype}, peak |u| {np.abs(t).max():.3e}")

    gather, field = result.traces[0], result.final_fields[0]
    src = result.sources[0][0]
    iy = int(round((src[1] - case.origin[1]) / case.spacing[1]))
    nz, ny, nx = case.shape
    extent_x = [case.origin[2], case.origin[2] + (nx - 1) * case.spacing[2]]
    extent_z = [case.origin[0] + (nz - 1) * case.spacing[0], case.origin[0]]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.5))
    clip = np.percentile(np.abs(gather), 99.5)  # the direct wave would hide the reflections
    a.imshow(gather.T, aspect="auto", cmap="gray", vmin=-clip, vmax=clip,
             extent=[0, gather.shape[0] - 1, result.times[-1], 0])
    a.set(title=f"{case.name}: shot {result.shots[0]} gather", xlabel="receiver", ylabel="time (s)")
    clip = np.abs(field).max()
    b.imshow(field[:, iy, :], cmap="seismic", vmin=-clip, vmax=clip, extent=extent_x + extent_z)
    b.set(title=f"final field, y = {case.origin[1] + iy * case.spacing[1]:.0f} m", xlabel="x (m)", ylabel="z (m)")
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
