#!/usr/bin/python3
"""The survey example's figures: per band, the misfit and the model error |v - v_true| / |v_true| at its start and
end (the model error over the grid inside the absorbing layer), from an invert run's files.

    cases/survey/report.py FOLDER     (the folder of generate.py's files, after run)
"""
import json
import pathlib
import sys

import h5py
import numpy as np

folder = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
with h5py.File(folder / "model_true.h5") as f:
    true = f["velocity"][...].astype(np.float64)
with h5py.File(folder / "inverted" / "inversion.h5") as f:
    models = f["velocity"][...].astype(np.float64)
lines = [json.loads(line) for line in (folder / "inverted" / "iterations.jsonl").read_text().splitlines()]
pml = 10
inner = (slice(0, true.shape[0] - pml), slice(pml, true.shape[1] - pml), slice(pml, true.shape[2] - pml))


def error(k):
    d = models[k][inner] - true[inner]
    return float(np.linalg.norm(d) / np.linalg.norm(true[inner]))


bands = sorted({line.get("band_hz") for line in lines if line.get("band_hz") is not None})
print("| band | iterations | misfit at start | misfit at end | misfit reduction | model error at start | at end |")
print("|---|---|---|---|---|---|---|")
for b in bands:
    rows = [k for k, line in enumerate(lines) if line.get("band_hz") == b]
    start = rows[0] - 1 if rows[0] > 0 else rows[0]  # a band starts from the previous band's last model
    first, last = lines[rows[0]], lines[rows[-1]]
    m0 = first["misfit"] / first["relative_misfit"] if first.get("relative_misfit") else first["misfit"]
    print(f"| {b:g} Hz | {len(rows) - (1 if rows[0] == 0 else 0)} | {m0:.4e} | {last['misfit']:.4e} | "
          f"{100 * (1 - last['misfit'] / m0):.1f}% | {error(start):.4f} | {error(rows[-1]):.4f} |")
print(f"model error: start {error(0):.4f}, final {error(len(lines) - 1):.4f} "
      f"({100 * (1 - error(len(lines) - 1) / error(0)):.1f}% lower)")

# The last band's wavelet estimate against the wavelet the data were made with (generate.py's TRUE_WAVELET).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from generate import TRUE_WAVELET  # noqa: E402

with h5py.File(folder / "inverted" / "source_estimate.h5") as f:
    estimate = f["wavelets"][...]
    dt = float(f["wavelets"].attrs["dt"])
    band = float(f["wavelets"].attrs["band_hz"])
t = np.arange(estimate.shape[1]) * dt
a = (np.pi * TRUE_WAVELET["peak_frequency"] * (t - TRUE_WAVELET["delay"])) ** 2
true_wavelet = TRUE_WAVELET["amplitude"] * (1 - 2 * a) * np.exp(-a)
# Compared within the band the estimate was made for: both low-passed alike (a zero-phase cos^2 taper from band to
# 1.5 band, as the misfit's).
freq = np.fft.rfftfreq(2 * len(t), dt)
gain = np.where(freq <= band, 1.0, np.where(freq < 1.5 * band, np.cos(0.5 * np.pi * (freq - band) / (0.5 * band)) ** 2,
                                             0.0)) if band > 0 else np.ones_like(freq)


def lowpass(x):
    return np.fft.irfft(np.fft.rfft(x, 2 * len(x)) * gain)[:len(x)]


for k, w in enumerate(estimate):
    e = np.linalg.norm(lowpass(w) - lowpass(true_wavelet)) / np.linalg.norm(lowpass(true_wavelet))
    print(f"wavelet estimate {k} ({band:g} Hz band): relative L2 error {e:.4f} against the data's wavelet "
          f"(both low-passed at the band), peak {w.max():.3f} at {t[w.argmax()]:.3f} s "
          f"(true {true_wavelet.max():.3f} at {t[true_wavelet.argmax()]:.3f} s)")
