"""Run under mpiexec by test_examples.py::test_mpi_forward_*: specwave.forward of the tiny case with the given shot
groups and process grid, rank 0 saving the traces and final fields (the first rank of each group holds its shots')."""
import sys

from mpi4py import MPI  # noqa: F401  (initialises MPI)
import numpy as np

import specwave
from conftest import tiny_case_dict

out, groups, pz, py_, px = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
d = tiny_case_dict("fp32")
d["run"].update({"shot_groups": groups, "process_grid": [pz, py_, px], "threads": 1})
r = specwave.forward(specwave.Case.from_dict(d), final_field=True)
comm = MPI.COMM_WORLD
finals = comm.gather(r.final_fields, root=0)
if comm.rank == 0:
    # each shot's field from the rank that holds it
    fields = [next(f[k] for f in finals if f[k] is not None) for k in range(len(r.shots))]
    np.savez(out, traces=np.stack(r.traces), fields=np.stack(fields))
