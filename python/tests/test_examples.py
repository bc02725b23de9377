"""The examples of examples/python run (small sizes) and say what they promise; the MPI one at 2 ranks agrees with
one rank."""

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import specwave

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLES = os.path.join(ROOT, "examples", "python")


def run(args, **kw):
    p = subprocess.run(args, capture_output=True, text=True, timeout=150, **kw)
    assert p.returncode == 0, f"{args} exited {p.returncode}:\n{p.stdout}\n{p.stderr}"
    return p.stdout


def test_torch_autograd_gradcheck():
    pytest.importorskip("torch")
    out = run([sys.executable, os.path.join(EXAMPLES, "torch_autograd.py")])
    assert "gradcheck: passed" in out


def test_scipy_lbfgsb_reduces_the_misfit():
    pytest.importorskip("scipy")
    out = run([sys.executable, os.path.join(EXAMPLES, "fwi_scipy.py"), "--iterations", "3"])
    m = re.search(r"final: misfit \S+ \(([\d.]+)% lower\), model error \S+ \(was \S+, ([-\d.]+)% lower\)", out)
    assert m, out
    assert float(m.group(1)) > 80 and float(m.group(2)) > 20, out


def test_forward_plot(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "gather.png"
    out = run([sys.executable, os.path.join(EXAMPLES, "forward_plot.py"), "--case",
               os.path.join(ROOT, "cases", "validation", "small.toml"), "--out", str(png)])
    assert png.stat().st_size > 10000 and "shot 1: traces" in out


def test_mpi_shots_at_two_ranks_equal_one_rank(tmp_path):
    pytest.importorskip("mpi4py")
    mpiexec = os.environ.get("SPECWAVE_MPIEXEC") or shutil.which("mpiexec")
    if not mpiexec:
        pytest.skip("no mpiexec (SPECWAVE_MPIEXEC)")
    saved = tmp_path / "g.npz"
    run([mpiexec, "-n", "2", sys.executable, os.path.join(EXAMPLES, "mpi_shots.py"), "--save", str(saved)],
        env={**os.environ, "OMP_NUM_THREADS": "1"})
    two = np.load(saved)
    assert int(two["ranks"]) == 2
    case = specwave.Case.from_file(os.path.join(ROOT, "cases", "inversion", "gaussian.toml"))
    op = specwave.Operator(case)
    observed = op.forward(case.true_model)
    np.testing.assert_array_equal(two["observed"], np.stack(observed))  # shared shots, traces exact
    start = np.asarray(case.model, dtype=np.float64)
    one = op.gradient(start, observed)
    np.testing.assert_array_equal(two["misfit_per_shot"], one["misfit_per_shot"])  # each shot on one rank: exact
    g = one["gradient"]
    # summed over ranks in another order: equal to rounding
    np.testing.assert_allclose(two["gradient"], g, rtol=0, atol=1e-12 * np.abs(g).max())
    image = op.adjoint(start, observed)
    np.testing.assert_allclose(two["image"], image, rtol=0, atol=1e-12 * np.abs(image).max())


@pytest.mark.parametrize("groups,grid", [(2, (1, 1, 1)), (1, (2, 1, 1)), (1, (1, 1, 2))])
def test_mpi_forward_equals_one_rank(tmp_path, groups, grid):
    """specwave.forward under mpiexec -n 2: shot groups, or one group decomposing the grid, as `specwave forward`;
    the decomposed FDTD is bitwise one rank's (docs/architecture.md), traces and fields."""
    pytest.importorskip("mpi4py")
    mpiexec = os.environ.get("SPECWAVE_MPIEXEC") or shutil.which("mpiexec")
    if not mpiexec:
        pytest.skip("no mpiexec (SPECWAVE_MPIEXEC)")
    saved = tmp_path / "f.npz"
    tests = os.path.dirname(os.path.abspath(__file__))
    run([mpiexec, "-n", "2", sys.executable, os.path.join(tests, "mpi_forward_run.py"), str(saved), str(groups),
         *map(str, grid)], env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.environ.get("PYTHONPATH", "") + os.pathsep + tests})
    two = np.load(saved)
    sys.path.insert(0, tests)
    from conftest import tiny_case_dict
    one = specwave.forward(specwave.Case.from_dict(tiny_case_dict("fp32")), final_field=True)
    np.testing.assert_array_equal(two["traces"], np.stack(one.traces))
    np.testing.assert_array_equal(two["fields"], np.stack(one.final_fields))
