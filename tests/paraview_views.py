#!/usr/bin/python3
"""Every grid output opens with ParaView's default reader (docs/hdf5-schema.md, "ParaView").

Runs a small forward case (two shots, snapshots and final fields) and a small inversion, then reads every .vtkhdf
view with VTK's vtkHDFReader (ParaView's reader for the format, from Debian's python3-vtk9) and checks it against the
HDF5 output read with h5py: the image's dimensions, origin and spacing against the dataset's grid attributes (VTK's x,
y, z order), and each point array's values, bit for bit, against the dataset or slice it links to. The views are read
from another working directory, and again after the output folder is moved, since their links are relative.

    paraview_views.py SPECWAVE WORKDIR INVERSION_CASE [LAUNCHER ...]
With a launcher (e.g. mpiexec -n 2), the fp32 forward case runs once more under it, decomposed over the ranks (the
views are written by rank 0 after the parallel file is complete), and its views are checked the same way.
Exit 77 (skipped) when vtk or h5py cannot be imported.
"""
import glob
import os
import shutil
import subprocess
import sys

try:
    import h5py
    import numpy as np
    import vtk
    from vtk.util.numpy_support import vtk_to_numpy
except ImportError as e:
    print(f"SKIPPED: {e} (Debian: apt-get install python3-vtk9 python3-h5py)")
    sys.exit(77)

FORWARD_CASE = """
name = "paraview-views"
[grid]
shape = [30, 26, 34]
spacing = [10.0, 12.0, 8.0]
origin = [5.0, -40.0, 100.0]
[model]
type = "layered"
interfaces = [150.0]
velocities = [1800.0, 2500.0]
[time]
duration = 0.08
[[shots]]
[[shots.sources]]
position = [100.0, 110.0, 230.0]
peak_frequency = 8.0
[[shots]]
[[shots.sources]]
position = [100.0, 110.0, 300.0]
peak_frequency = 8.0
[receivers]
points = [[120.0, 110.0, 250.0], [120.0, 120.0, 280.0]]
[scheme]
order = 4
[boundary]
pml_width = 6
[run]
precision = "{precision}"
threads = 1
[output]
directory = "out"
snapshot_every = 20
final_field = true
plots = false
"""

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAILED:", message)


def read_view(path):
    reader = vtk.vtkHDFReader()
    reader.SetFileName(path)
    reader.Update()
    return reader.GetOutput()


def expected_arrays(view_path):
    """The arrays a view links to, read with h5py through the view's own links."""
    out = {}
    with h5py.File(view_path, "r") as f:
        for name, d in f["VTKHDF/PointData"].items():
            out[name] = d[()]
    return out


def grid_of(h5_path, dataset):
    with h5py.File(h5_path, "r") as f:
        d = f[dataset]
        return list(d.attrs["spacing"]), list(d.attrs["origin"]), d.shape[-3:]


def check_view(view, h5_path, datasets):
    image = read_view(view)
    name = os.path.basename(view)
    check(image is not None and image.GetClassName() == "vtkImageData", f"{name}: not read as image data")
    if image is None:
        return
    spacing, origin, shape = grid_of(h5_path, datasets[0][1])
    check(tuple(image.GetDimensions()) == (shape[2], shape[1], shape[0]),
          f"{name}: dimensions {image.GetDimensions()} for a grid of {shape} (nz, ny, nx)")
    check(np.allclose(image.GetSpacing(), spacing[::-1], rtol=0, atol=1e-12),
          f"{name}: spacing {image.GetSpacing()}, the data's {spacing[::-1]} (x, y, z)")
    check(np.allclose(image.GetOrigin(), origin[::-1], rtol=0, atol=1e-12),
          f"{name}: origin {image.GetOrigin()}, the data's {origin[::-1]} (x, y, z)")
    points = image.GetPointData()
    with h5py.File(h5_path, "r") as f:
        for array, dataset, index in datasets:
            data = f[dataset][()] if index is None else f[dataset][index]
            a = points.GetArray(array)
            check(a is not None, f"{name}: no point array {array}")
            if a is None:
                continue
            values = vtk_to_numpy(a)
            check(values.dtype == data.dtype, f"{name}: {array} is {values.dtype}, the data {data.dtype}")
            check(np.array_equal(values, data.ravel()), f"{name}: {array} differs from {h5_path}:{dataset}[{index}]")
            check(np.ptp(data) > 0 or array == "velocity", f"{name}: {array} is constant: a test that cannot fail")


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        print(p.stdout)
        sys.exit(f"FAILED: {' '.join(cmd)} exited {p.returncode}")


def main():
    specwave, work, inversion_case = sys.argv[1:4]
    launcher = sys.argv[4:]
    specwave, inversion_case = os.path.abspath(specwave), os.path.abspath(inversion_case)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    elsewhere = os.path.join(work, "elsewhere")
    os.makedirs(elsewhere)

    runs = [("fp32", []), ("fp64", [])] + ([("fp32", launcher)] if launcher else [])
    for precision, prefix in runs:
        case = os.path.join(work, f"forward_{precision}.toml")
        with open(case, "w") as f:
            f.write(FORWARD_CASE.replace("{precision}", precision))
        out = os.path.join(work, f"forward_{precision}" + ("_launched" if prefix else ""))
        decomposed = ["--shot-groups", "1"] if prefix else []  # both ranks on each shot: its grid split in two
        run(prefix + [specwave, "forward", "-q", case, "--output-dir", out] + decomposed, work)
        os.chdir(elsewhere)  # the links resolve beside the view, not in the working directory
        wavefield = os.path.join(out, "wavefield.h5")
        with h5py.File(wavefield, "r") as f:
            steps = [int(s) for s in f["shot_0000/snapshots"].attrs["steps"]]
        check(len(steps) >= 2, f"forward {precision}: {len(steps)} snapshots, the case asks for several")
        views = sorted(glob.glob(os.path.join(out, "*.vtkhdf")))
        expected = {os.path.join(out, "model.vtkhdf")}
        for shot in range(2):
            for k, n in enumerate(steps):
                view = os.path.join(out, f"wavefield_shot{shot:04d}_step{n:06d}.vtkhdf")
                expected.add(view)
                check_view(view, wavefield, [("u", f"/shot_{shot:04d}/snapshots", k)])
            view = os.path.join(out, f"wavefield_shot{shot:04d}_final.vtkhdf")
            expected.add(view)
            check_view(view, wavefield, [("u", f"/shot_{shot:04d}/final", None)])
        check_view(os.path.join(out, "model.vtkhdf"), os.path.join(out, "model.h5"), [("velocity", "/velocity", None)])
        check(set(views) == expected, f"forward {precision}: views {sorted(set(views) ^ expected)} unexpected or missing")
        # The folder moved whole: the views still find their data.
        moved = out + "_moved"
        shutil.move(out, moved)
        final = os.path.join(moved, "wavefield_shot0001_final.vtkhdf")
        check_view(final, os.path.join(moved, "wavefield.h5"), [("u", "/shot_0001/final", None)])
        check(not os.path.exists(out), "the moved folder is still there")

    out = os.path.join(work, "inversion")
    run([specwave, "invert", inversion_case, "--output-dir", out], work)
    h5 = os.path.join(out, "inversion.h5")
    with h5py.File(h5, "r") as f:
        n = f["velocity"].shape[0]
    check(n >= 2, f"inversion: {n} models, expected several iterations")
    for k in range(n):
        check_view(os.path.join(out, f"inversion_iteration{k:04d}.vtkhdf"), h5,
                   [("velocity", "/velocity", k), ("gradient", "/gradient", k)])
    check_view(os.path.join(out, "inversion_true_velocity.vtkhdf"), h5, [("true_velocity", "/true_velocity", None)])

    if failures:
        print(f"paraview_views: {len(failures)} failures")
        return 1
    print("paraview_views: every view opens with vtkHDFReader and matches its data")
    return 0


if __name__ == "__main__":
    sys.exit(main())
