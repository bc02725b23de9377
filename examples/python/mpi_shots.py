#!/usr/bin/env python3
"""Shot-parallel gradient under MPI from Python (mpi4py): the ranks share the shots, as `specwave invert` does.

    mpiexec -n 2 env PYTHONPATH=build/python python3 examples/python/mpi_shots.py [--case cases/inversion/gaussian.toml]

Importing mpi4py initialises MPI; specwave's Operator then sees the ranks and runs shot s on rank s % size: forward()
gives every rank every shot's traces, gradient() sums the misfit and the gradient over the ranks (every rank gets the
same bits). Rank 0 prints the
misfit, per-shot misfits and the time (and with --save writes them; python/tests/test_examples.py compares them with
one rank's).
"""
import argparse
import os
import time

from mpi4py import MPI  # noqa: F401  (initialises MPI before specwave's first call)
import numpy as np

import specwave

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default=os.path.join(ROOT, "cases", "inversion", "gaussian.toml"))
    parser.add_argument("--save", help="rank 0 writes the misfits and the gradient to this .npz file (the test)")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    case = specwave.Case.from_file(args.case)
    case.threads = max(1, (os.cpu_count() or 1) // comm.size)
    op = specwave.Operator(case)
    truth = np.asarray(case.true_model, dtype=np.float64)
    start = np.asarray(case.model, dtype=np.float64)
    observed = op.forward(truth)  # the ranks share these shots too; every rank gets every shot's traces
    started = time.perf_counter()
    g = op.gradient(start, observed)
    seconds = time.perf_counter() - started
    if comm.rank == 0:
        print(f"{comm.size} rank(s): misfit {g['misfit']:.9e} in {seconds:.2f} s; per shot "
              + ", ".join(f"{j:.3e}" for j in g["misfit_per_shot"]))
    image = op.adjoint(start, observed)  # collective too: every rank calls it
    norms = comm.allgather(float(np.linalg.norm(g["gradient"])))
    if comm.rank == 0:
        same = all(n == norms[0] for n in norms)
        print(f"|gradient| {norms[0]:.9e}, the same bits on every rank: {same}")
        if args.save:
            np.savez(args.save, misfit_per_shot=g["misfit_per_shot"], gradient=g["gradient"], ranks=comm.size,
                     observed=np.stack(observed), image=image)


if __name__ == "__main__":
    main()
