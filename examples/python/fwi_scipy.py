#!/usr/bin/env python3
"""Full-waveform inversion with scipy's L-BFGS-B driving specwave's misfit and gradient.

    PYTHONPATH=build/python python3 examples/python/fwi_scipy.py [--case cases/inversion/gaussian.toml] [--iterations 8]

The observed data come from the case's [inversion.true_model] (the Gaussian anomaly), the start from its [model]
(homogeneous). scipy sees a function of the flattened velocity with bounds inversion.velocity_min/max; specwave
evaluates J and dJ/dv (fp64, every shot). Prints the misfit and the model error per iteration and their reductions.
"""
import argparse
import os

import numpy as np
import scipy.optimize

import specwave

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default=os.path.join(ROOT, "cases", "inversion", "gaussian.toml"))
    parser.add_argument("--iterations", type=int, default=8)
    args = parser.parse_args()

    case = specwave.Case.from_file(args.case)
    truth = np.asarray(case.true_model, dtype=np.float64)
    start = np.asarray(case.model, dtype=np.float64)
    op = specwave.Operator(case)
    observed = op.forward(truth)
    lo, hi = case.velocity_bounds
    history = []
    # scipy's tolerances are absolute: it sees the model in km/s and the misfit relative to the start's, so that
    # both are O(1) (in SI units the gradient is ~1e-15 and L-BFGS-B would stop at once).
    j_start = op.gradient(start, observed)["misfit"]

    def fun(x):
        g = op.gradient(1000.0 * x.reshape(case.shape), observed)
        history.append(g["misfit"])
        return g["misfit"] / j_start, g["gradient"].ravel() * (1000.0 / j_start)

    def error(v):
        return np.linalg.norm(v - truth) / np.linalg.norm(truth)

    e0 = error(start)
    print(f"start: misfit {j_start:.6e}, model error {e0:.4%}")

    def report(x):
        print(f"iteration {report.k}: misfit {history[-1]:.6e}, model error {error(1000.0 * x.reshape(case.shape)):.4%}",
              flush=True)
        report.k += 1

    report.k = 1
    res = scipy.optimize.minimize(fun, start.ravel() / 1000.0, jac=True, method="L-BFGS-B",
                                  bounds=[(lo / 1000.0, hi / 1000.0)] * start.size, callback=report,
                                  options={"maxiter": args.iterations, "maxcor": 5})
    final = 1000.0 * res.x.reshape(case.shape)
    j1, e1 = op.gradient(final, observed)["misfit"], error(final)
    print(f"final: misfit {j1:.6e} ({1 - j1 / j_start:.2%} lower), model error {e1:.4%} (was {e0:.4%}, "
          f"{1 - e1 / e0:.2%} lower), {len(history)} evaluations, scipy: {res.message}")


if __name__ == "__main__":
    main()
