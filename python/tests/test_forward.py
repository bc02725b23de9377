"""forward(): the CLI's traces bit for bit, fields, progress lines, Ctrl-C."""

import os
import signal
import subprocess
import threading
import time

import h5py
import numpy as np
import pytest

import specwave
from conftest import tiny_case_dict


@pytest.mark.parametrize("precision,method", [("fp32", "fdtd"), ("fp64", "fdtd"), ("fp32", "spectral")])
def test_traces_bitwise_equal_the_cli(tmp_path, cli, precision, method):
    d = tiny_case_dict(precision)
    d["scheme"]["method"] = method
    d["output"] = {"directory": str(tmp_path / "out"), "plots": False, "final_field": False}
    text = specwave.Case.dict_to_toml(d)
    path = tmp_path / "case.toml"
    path.write_text(text)
    subprocess.run([cli, "forward", "--quiet", str(path)], check=True)
    case = specwave.Case.from_file(str(path))
    result = specwave.forward(case)
    dtype = np.float32 if precision == "fp32" else np.float64
    with h5py.File(tmp_path / "out" / "traces.h5") as f:
        for s in range(case.n_shots):
            ref = f["traces"][s]  # (n_receivers, nt)
            got = result.traces[s]
            assert got.dtype == dtype and ref.dtype == dtype
            np.testing.assert_array_equal(got, ref)
    assert result.receivers.shape == (11, 3)
    assert result.times[-1] == pytest.approx((result.nt - 1) * result.dt)
    assert np.abs(result.traces[0]).max() > 0


def test_fields_and_snapshots(tiny_case):
    r = specwave.forward(tiny_case, shots=[1], final_field=True, snapshot_every=40)
    assert r.shots == [1]
    assert r.final_fields[0].shape == tiny_case.shape
    steps = r.snapshot_steps[0]
    assert steps == list(range(40, r.nt + 1, 40))
    assert len(r.snapshots[0]) == len(steps)
    # the snapshot at the last step (when nt is a multiple of 40) or the final field is u^nt
    assert np.abs(r.final_fields[0]).max() > 0


def test_model_argument_changes_the_traces(tiny_case):
    a = specwave.forward(tiny_case, shots=[0]).traces[0]
    b = specwave.forward(tiny_case, np.full(tiny_case.shape, 2300.0), shots=[0]).traces[0]
    assert a.shape[0] == b.shape[0] and not np.array_equal(a[:, : min(a.shape[1], b.shape[1])], b[:, : min(a.shape[1], b.shape[1])])


def test_progress_lines_go_to_the_callable(tiny_case):
    lines = []
    specwave.forward(tiny_case, progress=lines.append)
    assert lines and lines[-1].startswith("[progress]") and "ETA" in lines[-1]
    assert "(100.0%)" in lines[-1]


def test_progress_to_logging(tiny_case, caplog):
    with caplog.at_level("INFO", logger="specwave"):
        specwave.forward(tiny_case, shots=[0], progress="logging")
    assert any(r.message.startswith("[progress]") for r in caplog.records)


def test_bad_shots_and_options(tiny_case):
    with pytest.raises(IndexError, match="shot 5"):
        specwave.forward(tiny_case, shots=[5])
    with pytest.raises(TypeError, match=r"shot indices must be integers, found 0.5 \(float\)"):
        specwave.forward(tiny_case, shots=[0.5])
    with pytest.raises(TypeError, match="expected a list of shot indices"):
        specwave.forward(tiny_case, shots=0)
    assert len(specwave.forward(tiny_case, shots=[np.int64(1)]).traces) == 1
    with pytest.raises(ValueError, match="snapshot_every"):
        specwave.forward(tiny_case, snapshot_every=-1)
    with pytest.raises(ValueError, match="progress"):
        specwave.forward(tiny_case, progress="everywhere")


def test_ctrl_c_raises_keyboard_interrupt_and_the_module_still_runs():
    d = tiny_case_dict()
    d["grid"]["shape"] = [64, 64, 64]
    d["time"]["duration"] = 60.0  # about 45000 steps: far longer than the test waits
    d["run"]["check_every"] = 5
    case = specwave.Case.from_dict(d)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        specwave.forward(case, shots=[0])
    assert time.monotonic() - started < 10
    # Python's own handler is back, and the stop was forgotten: the next run completes.
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    small = specwave.Case.from_dict(tiny_case_dict())
    assert specwave.forward(small, shots=[0]).traces[0].shape[0] == 11


def test_results_own_the_engine_buffers(tiny_case):
    """No copy out: each returned array is a view of the engine's buffer, kept alive by a capsule."""
    r = specwave.forward(specwave.Case.from_dict(tiny_case_dict("fp64")), shots=[0], final_field=True)
    for a in (r.traces[0], r.final_fields[0], r.receivers):
        assert not a.flags.owndata and type(a.base).__name__ == "PyCapsule"
        assert a.flags.c_contiguous


def test_the_gil_is_released_during_a_run():
    """Another Python thread runs while the engine steps (it would be blocked if the GIL were held)."""
    d = tiny_case_dict()
    d["grid"]["shape"] = [40, 40, 40]
    d["time"]["duration"] = 3.0  # about 2000 steps of 64000 points: a second or more on 2 cores
    case = specwave.Case.from_dict(d)
    ticks, stop = [], threading.Event()

    def counter():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    t = threading.Thread(target=counter)
    specwave.forward(case, shots=[0])  # warm-up (plan, first touch)
    started = time.monotonic()
    t.start()
    specwave.forward(case, shots=[0])
    ended = time.monotonic()
    stop.set()
    t.join()
    during = [x for x in ticks if started < x < ended]
    assert ended - started > 0.3, "the run is too short to tell"
    assert len(during) >= 0.3 * (ended - started) / 0.01, (len(during), ended - started)


def test_a_velocity_array_keeps_the_case_density_and_q():
    """forward(case, model=v) replaces the velocity only: the case's density model and [attenuation] stay, so the case's
    own velocity passed as an array gives its traces bit for bit (the staggered scheme, docs/numerics.md)."""
    d = tiny_case_dict("fp64", shots=1)
    d["model"] = {"type": "layered", "interfaces": [120.0], "velocities": [2000.0, 2500.0],
                  "densities": [1000.0, 2200.0]}
    d["attenuation"] = {"q": [10000.0, 40.0]}
    del d["inversion"]
    case = specwave.Case.from_dict(d)
    own = specwave.forward(case)
    given = specwave.forward(case, model=case.model)
    np.testing.assert_array_equal(given.traces[0], own.traces[0])
    # Without the density contrast the reflection differs (the same dt: Q sets it): the test sees the density.
    d["model"]["densities"] = [1000.0, 1000.0]
    plain = specwave.forward(specwave.Case.from_dict(d))
    assert np.abs(plain.traces[0] - own.traces[0]).max() > 1e-3 * np.abs(own.traces[0]).max()


def test_threads_plan_and_run_at_once_and_share_an_operator_safely():
    """Cases planned from several Python threads at once (the GIL released: FFTW's planner and the output folder's
    probe serialised), the module's forward in threads, and one Operator shared by threads (its calls take turns):
    every result bitwise the serial one."""
    from concurrent.futures import ThreadPoolExecutor

    cases = [specwave.Case.from_dict(tiny_case_dict()) for _ in range(4)]
    with ThreadPoolExecutor(4) as pool:
        plans = list(pool.map(lambda k: cases[k % 4].plan().nt, range(40)))
    assert len(set(plans)) == 1
    models = [np.full(cases[0].shape, 2000.0 + 50.0 * k) for k in range(4)]
    serial = [specwave.forward(cases[0], m).traces for m in models]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(lambda m: specwave.forward(cases[0], m).traces, models))
    for s, t in zip(serial, threaded):
        assert all(np.array_equal(a, b) for a, b in zip(s, t))
    op = specwave.Operator(cases[0], velocity_max=2400.0)
    alone = [op.forward(m) for m in models]
    with ThreadPoolExecutor(4) as pool:
        shared = list(pool.map(op.forward, models))
    for s, t in zip(alone, shared):
        assert all(np.array_equal(a, b) for a, b in zip(s, t))


def test_a_big_endian_model_runs_as_its_native_copy(tiny_case):
    """Big-endian floats (SEG-Y, np.fromfile(..., ">f4")) are taken by value: the same traces as the native array."""
    v = np.full(tiny_case.shape, 2000.0)
    native = specwave.forward(tiny_case, v).traces
    for order in (">f8", ">f4"):
        swapped = specwave.forward(tiny_case, v.astype(order)).traces
        assert all(np.array_equal(a, b) for a, b in zip(native, swapped))


def test_snapshots_that_cannot_fit_in_memory_are_refused_before_the_run():
    """forward() keeps every snapshot in memory: about 2 million snapshots of 40^3 fp64 (some terabytes) are refused
    (specwave.Error, category "resources") before a step runs, naming snapshot_every."""
    d = tiny_case_dict()
    d["grid"]["shape"] = [40, 40, 40]
    d["time"]["duration"] = 3600.0
    case = specwave.Case.from_dict(d)
    with pytest.raises(specwave.Error, match="snapshot_every") as refused:
        specwave.forward(case, snapshot_every=1)
    assert refused.value.category == "resources"


def test_the_module_ignores_an_unusable_output_directory(tmp_path):
    """The module writes no files: a case whose output.directory cannot be made (under a file) plans and runs, and
    nothing is created."""
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    d = tiny_case_dict()
    d["output"] = {"directory": str(blocker / "out")}
    case = specwave.Case.from_dict(d)
    assert case.plan().nt > 0
    assert len(specwave.forward(case).traces) == 2
    assert specwave.Operator(case).plan.nt > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]
