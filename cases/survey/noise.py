#!/usr/bin/python3
"""Adds Gaussian noise to a traces.h5 (either layout): noise of `--level` times the rms of all traces, fixed seed.

    cases/survey/noise.py IN.h5 OUT.h5 [--level 0.05] [--seed 17]
"""
import argparse
import shutil

import h5py
import numpy as np

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("inp")
ap.add_argument("out")
ap.add_argument("--level", type=float, default=0.05)
ap.add_argument("--seed", type=int, default=17)
a = ap.parse_args()
shutil.copyfile(a.inp, a.out)
with h5py.File(a.out, "r+") as f:
    t = f["traces"][...]
    rms = float(np.sqrt(np.mean(t.astype(np.float64) ** 2)))
    t = t + np.random.default_rng(a.seed).normal(0.0, a.level * rms, t.shape).astype(t.dtype)
    f["traces"][...] = t
print(f"noise: {a.out}: Gaussian noise of {a.level:g} x the rms {rms:.3e} of the traces")
