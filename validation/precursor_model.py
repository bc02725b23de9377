#!/usr/bin/python3
"""What a band-limited point source sends ahead of the direct wave, in the exact wave equation.

A model of docs/numerics.md "Sources and receivers of the spectral method", written from the formulas there (it
does not call the engine): per axis the weights are the least-squares fit of exp(-(c k)^2 / 24) exp(-i k (q - j))
over 0 <= k <= a on the 2r + 1 nodes round(q) - r .. round(q) + r, with H(0) = 1 and H(pi) = 0. The wave equation
u_tt = v^2 (lap u + s(t) point) is then solved exactly in time, per wavenumber, on a periodic N^3 box: for
v = c_ref this is what the k-space scheme computes, so the model's traces are the engine's in a homogeneous medium
without its absorbing layer. A receiver on the grid line through an on-grid source reads the same weights. The
printed ratio is the largest |trace| before r / v over the trace's peak, as tests/test_physics.cpp "spectral: no
acausal precursor" measures it.

The second table tries other weights at 3 points per wavelength: each trades the fit's accuracy (|H - G| up to k,
rad per sample) against what arrives early near the source. Run: /usr/bin/python3 validation/precursor_model.py
(numpy; about 5 s on 2 cores). With --check (CTest precursor_model) it also fails unless the tables still say what
docs/numerics.md and docs/validation.md draw from them.
"""
import sys

try:
    import numpy as np
    from numpy.polynomial.legendre import leggauss
except ImportError:  # (CTest precursor_model: skipped, exit 77, on a machine without numpy)
    print("precursor_model: skipped: numpy is not installed (scripts/setup installs python3-numpy)")
    sys.exit(77)


def sinc_matrix(band, d):
    """int_0^band cos(k d) dk for every difference d of node positions."""
    safe = np.where(d == 0, 1.0, d)
    return np.where(d == 0, band, np.sin(band * d) / safe)


def weights(q, courant, band, radius=6, taper=0.0):
    """The spectral point's weights along one axis (taper > 0: a penalty taper * (x / r)^8 w^2 on the outer ones)."""
    j0 = int(round(q)) - radius
    n = 2 * radius + 1
    x = np.arange(n) + j0 - q
    m = sinc_matrix(band, x[:, None] - x[None, :]) + taper * np.diag((x / radius) ** 8)
    g, gw = leggauss(64)
    k = (g + 1) * band / 2
    target = gw * band / 2 * np.exp(-(courant * k) ** 2 / 24)
    b = target @ np.cos(np.outer(k, x))
    rows = [np.ones(n), np.where((np.arange(n) + j0) % 2 == 0, 1.0, -1.0)]
    kkt = np.zeros((n + 2, n + 2))
    kkt[:n, :n] = m
    for c, row in enumerate(rows):
        kkt[:n, n + c] = kkt[n + c, :n] = row
    w = np.linalg.solve(kkt, np.concatenate([b, [1.0, 0.0]]))[:n]
    return x, w


def fit_error(x, w, courant, k_max):
    k = np.linspace(0, k_max, 200)
    h = (w[None, :] * np.exp(1j * np.outer(k, x))).sum(1)
    return np.abs(h - np.exp(-(courant * k) ** 2 / 24)).max()


def precursor(x, w, ppw, distances, n=96, courant=0.3):
    """Largest |trace| before r / v over the peak, receivers at `distances` cells along z from the source."""
    h, v = 10.0, 2000.0
    f = v / (ppw * h * 2.4)  # Ricker peak frequency; f_max = 2.4 f has ppw points a wavelength
    dt, t0 = courant * h / v, 1.5 / f
    nt = int((max(distances) * h / v + 3 / f) / dt) + 1
    k = 2 * np.pi * np.fft.fftfreq(n)
    hk = (w[None, :] * np.exp(-1j * np.outer(k, x))).sum(1).real ** 2  # source and receiver, per axis
    kabs = np.sqrt(k[:, None, None] ** 2 + k[None, :, None] ** 2 + k[None, None, :] ** 2) / h
    two_cos = 2 * np.cos(v * kabs * dt)
    weight = hk[:, None, None] * hk[None, :, None] * hk[None, None, :]
    u_prev, u = np.zeros_like(kabs), np.zeros_like(kabs)
    traces = np.zeros((nt, n))
    for step in range(nt):
        traces[step] = np.fft.ifft((weight * u).sum(axis=(1, 2))).real * n  # the field along the z line
        tau = np.pi * f * (step * dt - t0)
        source = (1 - 2 * tau * tau) * np.exp(-tau * tau)
        u_prev, u = u, two_cos * u - u_prev + (v * dt) ** 2 * source
    t = np.arange(nt) * dt
    return [np.abs(traces[t < d * h / v, d]).max() / np.abs(traces[:, d]).max() for d in distances]


def main(check):
    distances = [6, 8, 10, 12, 16, 24, 40]
    table = {}
    courant = 0.3
    header = " ".join(f"{d:>8d}" for d in distances)
    print("The engine's weights (band: 0.9 of 2 pi / ppw, within [pi/2, 0.8 pi]; radius 6), on-grid source")
    print(f"{'ppw':>5} {'band/pi':>8} {'|H-G| pi/3':>11} |{header}  (cells)")
    for ppw in (4.0, 3.0):
        band = float(np.clip(0.9 * 2 * np.pi / ppw, np.pi / 2, 0.8 * np.pi))
        x, w = weights(0.0, courant, band)
        ratios = precursor(x, w, ppw, distances)
        table[ppw] = ratios
        print(f"{ppw:5.1f} {band / np.pi:8.2f} {fit_error(x, w, courant, np.pi / 3):11.1e} |" +
              " ".join(f"{r:8.1e}" for r in ratios))
    print("\nOther weights at 3 points per wavelength")
    print(f"{'weights':>24} {'|H-G| pi/3':>11} {'2pi/3':>8} |{header}")
    for name, kwargs in [("band 0.6 pi (the engine)", {}), ("band 0.5 pi", {"band": 0.5 * np.pi}),
                         ("radius 4", {"radius": 4}), ("radius 3", {"radius": 3}),
                         ("outer taper 0.1", {"taper": 0.1}), ("outer taper 10", {"taper": 10.0})]:
        band = kwargs.pop("band", 0.6 * np.pi)
        x, w = weights(0.0, courant, band, **kwargs)
        ratios = precursor(x, w, 3.0, distances)
        table[name] = (ratios, fit_error(x, w, courant, np.pi / 3))
        print(f"{name:>24} {fit_error(x, w, courant, np.pi / 3):11.1e} {fit_error(x, w, courant, 2 * np.pi / 3):8.1e} |" +
              " ".join(f"{r:8.1e}" for r in ratios))


    if not check:
        return 0
    # What the docs draw from the tables: below 1e-3 at every distance from 4 points per wavelength, and at 3 from 10
    # cells; above it nearer at 3; radius 3 removes it only by missing the fit at pi/3 by more than 1e-2.
    far = [r for d, r in zip(distances, table[3.0]) if d >= 10]
    claims = {
        "4 points per wavelength: below 1e-3 everywhere": max(table[4.0]) < 1e-3,
        "3 points per wavelength: below 1e-3 from 10 cells": max(far) < 1e-3,
        "3 points per wavelength: above 1e-3 at 8 cells": table[3.0][1] > 1e-3,
        "radius 3: below 1e-3 everywhere, fit error above 1e-2":
            max(table["radius 3"][0]) < 1e-3 and table["radius 3"][1] > 1e-2,
    }
    for claim, holds in claims.items():
        print(f"{'holds' if holds else 'FAILS'}: {claim}")
    return 0 if all(claims.values()) else 1


if __name__ == "__main__":
    sys.exit(main("--check" in sys.argv[1:]))
