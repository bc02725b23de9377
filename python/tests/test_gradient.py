"""gradient(), born(), adjoint(): the dot-product and Taylor tests from Python, and bad arrays."""

import numpy as np
import pytest

import specwave
from conftest import tiny_case_dict


@pytest.fixture(scope="module")
def setup():
    case = specwave.Case.from_dict(tiny_case_dict("fp64"))
    op = specwave.Operator(case)
    observed = op.forward(case.true_model)  # the Gaussian anomaly
    start = np.asarray(case.model, dtype=np.float64)  # homogeneous
    return case, op, start, observed


def test_born_adjoint_dot_product(setup):
    case, op, start, _ = setup
    rng = np.random.default_rng(7)
    dm = rng.standard_normal(case.shape)
    r = [rng.standard_normal((op.n_receivers, op.plan.nt)) for _ in range(op.n_shots)]
    lhs = sum(float(np.vdot(b, ri)) for b, ri in zip(op.born(start, dm), r))
    rhs = float(np.vdot(dm, op.adjoint(start, r)))
    assert abs(lhs - rhs) / max(abs(lhs), abs(rhs)) < 1e-10


def test_gradient_is_the_adjoint_of_the_residual(setup):
    case, op, start, observed = setup
    g = op.gradient(start, observed, illumination=True)
    synthetic = op.forward(start)
    dt = op.plan.dt
    residual = [dt * (s - o) for s, o in zip(synthetic, observed)]
    misfit = sum(0.5 * dt * float(np.sum((s - o) ** 2)) for s, o in zip(synthetic, observed))
    assert g["misfit"] == pytest.approx(misfit, rel=1e-12)
    assert g["misfit_per_shot"].shape == (2,)
    image = op.adjoint(start, residual)
    np.testing.assert_allclose(g["gradient"], image, rtol=0, atol=1e-12 * np.abs(image).max())
    assert g["illumination"].shape == case.shape and g["illumination"].min() >= 0


def test_taylor(setup):
    case, op, start, observed = setup
    g = op.gradient(start, observed)
    z, y, x = np.meshgrid(*[np.arange(n) for n in case.shape], indexing="ij")
    c = np.array(case.shape) / 2
    direction = 20.0 * np.exp(-((z - c[0]) ** 2 + (y - c[1]) ** 2 + (x - c[2]) ** 2) / (2 * 4.0**2))
    j0, slope = g["misfit"], float(np.vdot(g["gradient"], direction))
    hs = [0.4, 0.2, 0.1, 0.05]
    r1, r2 = [], []
    for h in hs:
        j = op.gradient(start + h * direction, observed)["misfit"]
        r1.append(abs(j - j0))
        r2.append(abs(j - j0 - h * slope))
    s1 = np.polyfit(np.log(hs), np.log(r1), 1)[0]
    s2 = np.polyfit(np.log(hs), np.log(r2), 1)[0]
    assert abs(s1 - 1) < 0.1 and abs(s2 - 2) < 0.1, (s1, s2)


def test_module_functions_plan_for_the_model(setup):
    case, op, start, observed = setup
    a = specwave.gradient(case, observed, start)
    b = op.gradient(start, observed)
    # the same model and case keys: the plan of the module function keeps dt (time from velocity_max)
    assert a["misfit"] == pytest.approx(b["misfit"], rel=1e-12)


def test_bad_arrays_run_nothing(setup):
    case, op, start, observed = setup
    lines = []
    with pytest.raises(ValueError, match=r"observed\[1\]: shape"):
        op.gradient(start, [observed[0], observed[1][:, :-1]], progress=lines.append)
    with pytest.raises(ValueError, match="2 arrays|1 arrays"):
        op.gradient(start, observed[:1], progress=lines.append)
    with pytest.raises(TypeError, match="dtype"):
        op.born(start, np.zeros(case.shape, dtype=np.int32), progress=lines.append)
    bad = start.copy()
    bad[0, 0, 0] = np.inf
    with pytest.raises(ValueError, match=r"model: value inf at index \(0, 0, 0\)"):
        op.forward(bad, progress=lines.append)
    with pytest.raises(ValueError, match="not C-contiguous"):
        op.adjoint(start, [o[:, ::-1] for o in observed], progress=lines.append)
    assert lines == []


def test_a_model_above_the_stable_limit_is_refused(setup):
    case, op, start, observed = setup
    with pytest.raises(specwave.Error) as e:
        op.forward(np.full(case.shape, 5000.0))
    assert e.value.category == "invalid_case"


@pytest.mark.parametrize("parameters", [["velocity", "density"], ["velocity", "shear_velocity"], ["lambda", "mu"]])
def test_several_parameters_are_refused(parameters):
    """The Operator's model is the velocity alone: a case that names other parameters is refused (its gradient would
    be dJ/dvp whatever the case asks), before anything runs."""
    d = tiny_case_dict("fp64")
    if parameters == ["velocity", "density"]:
        d["model"] = {"type": "layered", "interfaces": [], "velocities": [2000.0], "densities": [2000.0]}
    else:
        d["model"].update({"density": 2000.0, "shear_velocity": 900.0})
    d["inversion"]["true_model"] = dict(d["model"], velocities=[2050.0]) if "velocities" in d["model"] else dict(
        d["model"], velocity=2050.0)
    d["inversion"]["parameters"] = parameters
    if parameters == ["lambda", "mu"]:
        d["inversion"].pop("velocity_min")
    case = specwave.Case.from_dict(d)
    with pytest.raises(specwave.Error, match="inversion.parameters names") as e:
        specwave.Operator(case)
    assert e.value.category == "invalid_case"


def test_receivers_per_shot():
    """Shots with their own receivers (a streamer): per-shot arrays of their own sizes, the Born/adjoint dot test,
    and the same traces as the command-line engine's forward run (specwave.forward)."""
    d = tiny_case_dict("fp64")
    d["receivers"] = {"streamer": {"count": 4, "first_offset": 20.0, "spacing": 10.0, "depth": 165.0}}
    d["shots"][1]["receivers"] = {"points": [[165.0, 115.0, 100.0], [165.0, 125.0, 120.0]]}
    case = specwave.Case.from_dict(d)
    op = specwave.Operator(case)
    assert op.receiver_counts == [4, 2]
    with pytest.raises(ValueError, match="receivers of their own"):
        op.n_receivers
    np.testing.assert_allclose(case.shot_receivers(0)[:, 2], [85.0, 95.0, 105.0, 115.0])
    start = np.asarray(case.model, dtype=np.float64)
    traces = op.forward(start)
    assert [t.shape for t in traces] == [(4, op.plan.nt), (2, op.plan.nt)]
    run = specwave.forward(case)
    assert [r.shape for r in run.receivers] == [(4, 3), (2, 3)]
    for a, b in zip(run.traces, traces):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * np.abs(b).max())
    rng = np.random.default_rng(3)
    dm = rng.standard_normal(case.shape)
    r = [rng.standard_normal(t.shape) for t in traces]
    lhs = sum(float(np.vdot(b, ri)) for b, ri in zip(op.born(start, dm), r))
    rhs = float(np.vdot(dm, op.adjoint(start, r)))
    assert abs(lhs - rhs) / max(abs(lhs), abs(rhs)) < 1e-10
    with pytest.raises(ValueError, match="not all as many"):
        op.gradient(start, np.zeros((2, 4, op.plan.nt)))
    g = op.gradient(start, op.forward(case.true_model))
    assert g["misfit"] > 0 and g["gradient"].shape == case.shape


def test_four_component_receivers_and_a_force_source():
    """Receivers of pressure and particle velocity (receivers.components) and a force source: the operator's traces
    are the command-line engine's (velocity in m/s), and the Born operator and its adjoint pass the dot-product test
    through the velocity's time integral."""
    d = tiny_case_dict("fp64")
    d["model"]["density"] = 1000.0
    d["receivers"]["components"] = ["p", "vz", "vx"]
    d["shots"][1]["sources"][0].update({"kind": "force", "direction": [1.0, 0.0, 1.0]})
    case = specwave.Case.from_dict(d)
    assert case.receiver_components(0)[:4] == ["p", "vz", "vx", "p"]
    op = specwave.Operator(case)
    assert op.n_receivers == 33
    start = np.asarray(case.model, dtype=np.float64)
    traces = op.forward(start)
    run = specwave.forward(case)
    for a, b in zip(run.traces, traces):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * np.abs(b).max())
    assert np.abs(traces[0][1]).max() < 1e-3 * np.abs(traces[0][0]).max()  # m/s against pressure: 1 / (rho v)
    rng = np.random.default_rng(5)
    dm = rng.standard_normal(case.shape)
    r = [rng.standard_normal(np.shape(t)) for t in traces]
    lhs = sum(float(np.vdot(b, ri)) for b, ri in zip(op.born(start, dm), r))
    rhs = float(np.vdot(dm, op.adjoint(start, r)))
    assert abs(lhs - rhs) / max(abs(lhs), abs(rhs)) < 1e-10


def test_module_gradient_checks_the_dt_of_a_forward_result():
    """The module's gradient plans dt for its `model`: given forward()'s result as `observed`, a different dt is a
    ValueError naming both (not a misfit between different times); the same dt runs."""
    case = specwave.Case.from_dict(tiny_case_dict())
    slow = np.full(case.shape, 2000.0)
    fast = slow.copy()
    fast[0, 0, 0] = 2600.0  # a corner faster than inversion.velocity_max (2400): a smaller dt
    observed = specwave.forward(case, slow)
    assert specwave.gradient(case, observed, slow)["misfit"] == 0.0
    with pytest.raises(ValueError, match="sampled at dt"):
        specwave.gradient(case, observed, fast)


def test_a_growing_field_stops_the_operator_as_it_stops_forward():
    """The Operator's forward passes run `specwave forward`'s checks: the elastic probe's case with the plain CPML
    (boundary.pml_multiaxial = 0) grows at late times (docs/validation.md, "Late growth"), and the watch stops it at
    step 4500 with a blow_up error, as the CLI does (tests/test_cli.cpp)."""
    d = {"name": "late_growth", "grid": {"shape": [100, 1, 100], "spacing": 10.0},
         "model": {"type": "layered", "interfaces": [203.0], "velocities": [2400.0, 3000.0],
                   "shear_velocities": [800.0, 1500.0], "densities": [1000.0, 2500.0]},
         "time": {"duration": 8.0},
         "shots": [{"sources": [{"position": [0.0, 0.0, 480.0], "peak_frequency": 6.0, "kind": "force",
                                 "direction": [1.0, 0.0, 0.0]}]}],
         "receivers": {"components": ["vz", "vx"], "points": [[300.0, 0.0, 500.0]]},
         "scheme": {"order": 8, "min_points_per_wavelength": 3.0},
         "boundary": {"pml_width": 12, "free_surface": True, "pml_multiaxial": 0.0},
         "run": {"precision": "fp64"}}
    case = specwave.Case.from_dict(d)
    op = specwave.Operator(case)
    lines = []
    with pytest.raises(specwave.Error, match="its sources fell silent at step 323") as e:
        op.forward(np.asarray(case.model, dtype=np.float64), progress=lines.append)
    assert e.value.category == "blow_up" and "step 4500" in str(e.value)
