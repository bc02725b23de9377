#!/usr/bin/env python3
"""The spectral Born dot-product test over grid shapes and spacings (docs/validation.md, "Spectral gradient").

Runs `specwave check-gradient` on the case cases/validation/gradient-spectral.toml reshaped: each shape and each
spacing below, the source, receivers and anomaly at the same fractions of the grid, the peak frequency and the
duration scaled with the spacing (the same case in grid units), for both absorbers, and prints the fp64 and fp32
dot-test mismatches as a Markdown table with their range.

    validation/dot_test_survey.py build/solver/specwave [WORKDIR]
"""
import os
import re
import subprocess
import sys

specwave = os.path.abspath(sys.argv[1])
work = sys.argv[2] if len(sys.argv) > 2 else "/tmp/specwave-dot-survey"
os.makedirs(work, exist_ok=True)

SHAPES = [(24, 25, 28), (22, 22, 22), (23, 27, 31), (32, 22, 26), (26, 26, 40), (30, 31, 23)]
SPACINGS = [(10.0, 10.0, 10.0), (7.5, 7.5, 7.5), (12.5, 12.5, 12.5), (8.0, 12.0, 10.0)]

CASE = """name = "dot-survey"
[grid]
shape = [{nz}, {ny}, {nx}]
spacing = [{dz}, {dy}, {dx}]
[model]
type = "gaussian"
velocity = 2000.0
anomaly = 300.0
center = [{cz}, {cy}, {cx}]
radius = {radius}
[time]
duration = {duration}
[[shots]]
[[shots.sources]]
position = [{sz}, {sy}, {sx}]
peak_frequency = {f}
[[receivers.lines]]
start = [{rz}, {cy}, {r0}]
end = [{rz}, {cy}, {r1}]
count = 8
[scheme]
method = "spectral"
[boundary]
pml_width = 6
spectral_absorber = "{absorber}"
[run]
precision = "fp64"
threads = 1
[output]
directory = "out"
[inversion]
velocity_min = 1500.0
velocity_max = 2600.0
[inversion.true_model]
type = "gaussian"
velocity = 2000.0
anomaly = -100.0
center = [{tz}, {cy}, {tx}]
radius = {radius}
"""


def case_text(shape, spacing, absorber):
    nz, ny, nx = shape
    dz, dy, dx = spacing
    h = (dz * dy * dx) ** (1 / 3)
    ext = [(n - 1) * d for n, d in zip(shape, spacing)]
    # Everything inside the layers (6 points a face: at least 0.29 of the smallest extent in from each side).
    return CASE.format(nz=nz, ny=ny, nx=nx, dz=dz, dy=dy, dx=dx, cz=0.55 * ext[0], cy=0.5 * ext[1], cx=0.5 * ext[2],
                       radius=4 * h, duration=0.15 * h / 10, sz=0.42 * ext[0] + 0.3 * dz, sy=0.48 * ext[1],
                       sx=0.38 * ext[2] + 0.4 * dx, f=20.0 * 10 / h, rz=0.36 * ext[0], r0=0.33 * ext[2],
                       r1=0.67 * ext[2], absorber=absorber, tz=0.6 * ext[0], tx=0.55 * ext[2])


rows = []
for absorber in ("pml", "damping"):
    for shape in SHAPES:
        for spacing in SPACINGS:
            path = os.path.join(work, "case.toml")
            with open(path, "w") as f:
                f.write(case_text(shape, spacing, absorber))
            p = subprocess.run([specwave, "check-gradient", path], cwd=work, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            dots = dict(re.findall(r"^\| (fp64|fp32) \| \S+ \| \S+ \| (\S+) \|", p.stdout, re.M))
            if "fp64" not in dots or "fp32" not in dots:
                print(p.stdout[-2000:])
                sys.exit(f"dot_test_survey: no dot-test rows for {absorber} {shape} {spacing} (exit {p.returncode})")
            rows.append((absorber, shape, spacing, float(dots["fp64"]), float(dots["fp32"])))
            print(f"{absorber:8s} {shape} {spacing}: fp64 {dots['fp64']}, fp32 {dots['fp32']}", file=sys.stderr)

print("| absorber | shape (nz, ny, nx) | spacing (m) | dot test fp64 | dot test fp32 |")
print("|---|---|---|---:|---:|")
for a, s, h, d64, d32 in rows:
    print(f"| {a} | {s[0]} x {s[1]} x {s[2]} | {h[0]:g} x {h[1]:g} x {h[2]:g} | {d64:.2e} | {d32:.2e} |")
for a in ("pml", "damping"):
    r = [x for x in rows if x[0] == a]
    print(f"\n{a}: fp64 {min(x[3] for x in r):.1e} .. {max(x[3] for x in r):.1e}, "
          f"fp32 {min(x[4] for x in r):.1e} .. {max(x[4] for x in r):.1e} over {len(r)} grids")
