"""Cases from a file, a TOML string or a dict: the CLI's parser, checks and messages."""

import os
import tomllib

import numpy as np
import pytest

import specwave
from conftest import tiny_case_dict

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def test_case_from_file_and_plan():
    case = specwave.Case.from_file(os.path.join(ROOT, "cases", "inversion", "gaussian.toml"))
    assert case.shape == (32, 32, 32)
    assert case.n_shots == 4
    assert case.receivers.shape == (144, 3)
    plan = case.plan()
    assert plan.nt > 1 and 0 < plan.cfl <= 1
    assert plan.dt == pytest.approx(plan.cfl * plan.dt_max)
    assert plan.points_per_wavelength >= plan.points_per_wavelength_floor
    assert plan.memory_bytes > 0
    assert "grid" in case.describe()


def test_dict_is_the_same_case_as_its_toml():
    d = tiny_case_dict()
    a = specwave.Case.from_dict(d)
    b = specwave.Case.from_toml(specwave.Case.dict_to_toml(d))
    assert a.plan().dt == b.plan().dt and a.plan().nt == b.plan().nt
    np.testing.assert_array_equal(a.receivers, b.receivers)
    np.testing.assert_array_equal(a.model, b.model)


def test_dict_strings_are_escaped_and_nesting_is_bounded():
    # A value holding three single quotes stays one string (it used to end toml++'s literal string and add keys).
    d = tiny_case_dict()
    d["name"] = "tiny'''x"
    d["model"]["file"] = "m'''\n[run]\nprecision = 'fp64'\n#"
    parsed = tomllib.loads(specwave.Case.dict_to_toml(d))
    assert parsed == d  # the string whole, no key added
    del d["model"]["file"]
    case = specwave.Case.from_dict(d)
    assert case.name == "tiny'''x"
    # A dict that holds itself, and one nested 30000 deep: refused (they overflowed the stack).
    cyclic = tiny_case_dict()
    cyclic["model"]["self"] = cyclic
    deep = tiny_case_dict()
    node = deep["model"]
    for _ in range(30000):
        node["x"] = {}
        node = node["x"]
    for bad in (cyclic, deep):
        with pytest.raises(specwave.Error, match="nested more than 64 deep"):
            specwave.Case.from_dict(bad)
    with pytest.raises(specwave.Error, match="does not fit in 64 bits"):
        specwave.Case.dict_to_toml({"x": 2**70})
    with pytest.raises(ValueError, match="holds no /"):
        case.name = "a/b"
    with pytest.raises(TypeError, match="case.model = None"):
        case.model = None


def test_bad_key_raises_the_cli_message_with_its_exit_code():
    d = tiny_case_dict()
    d["grid"]["shpae"] = [1, 2, 3]
    with pytest.raises(specwave.Error) as e:
        specwave.Case.from_dict(d)
    assert e.value.code == 3 and e.value.category == "invalid_case"
    assert "grid.shpae" in str(e.value) and "shape" in str(e.value)  # "did you mean"


def test_a_case_that_cannot_run_is_refused_by_the_plan():
    d = tiny_case_dict()
    d["time"]["dt"] = 1.0  # far above the CFL limit
    with pytest.raises(specwave.Error) as e:
        specwave.Case.from_dict(d).plan()
    assert e.value.category == "invalid_case" and "time.dt" in str(e.value)


def test_missing_file_is_an_input_error():
    with pytest.raises(specwave.Error) as e:
        specwave.Case.from_file("/nonexistent/case.toml")
    assert e.value.code == 4 and "/nonexistent/case.toml" in str(e.value)


def test_model_override_is_checked():
    case = specwave.Case.from_dict(tiny_case_dict())
    v = np.full(case.shape, 2100.0)
    case.model = v
    np.testing.assert_array_equal(case.model, v.astype(np.float32))
    assert case.plan().v_max == pytest.approx(2100.0)
    with pytest.raises(ValueError, match=r"shape \(24, 24, 23\) differs from the expected \(24, 24, 24\)"):
        case.model = np.full((24, 24, 23), 2000.0)
    with pytest.raises(TypeError, match="dtype int64"):
        case.model = np.full(case.shape, 2000, dtype=np.int64)
    with pytest.raises(ValueError, match="not C-contiguous"):
        case.model = np.asfortranarray(v)
    bad = v.copy()
    bad[3, 4, 5] = np.nan
    with pytest.raises(ValueError, match=r"value nan at index \(3, 4, 5\)"):
        case.model = bad
    bad[3, 4, 5] = -1.0
    with pytest.raises(ValueError, match=r"finite and > 0"):
        case.model = bad


def test_settable_run_keys():
    case = specwave.Case.from_dict(tiny_case_dict())
    case.precision = "fp32"
    assert case.precision == "fp32"
    with pytest.raises(ValueError, match="fp32"):
        case.precision = "fp16"
    with pytest.raises(ValueError, match="cpu"):
        case.backend = "tpu"


def test_a_model_too_large_to_build_is_refused_before_it_is_built():
    """case.model on a 5000^3 grid (about 1.5 TB to build and return): specwave.Error "resources" at once, not an
    attempt that runs the machine out of memory."""
    d = tiny_case_dict()
    d["grid"]["shape"] = [5000, 5000, 5000]
    case = specwave.Case.from_dict(d)
    with pytest.raises(specwave.Error, match="case.model: the 5000 x 5000 x 5000 model needs about") as refused:
        case.model
    assert refused.value.category == "resources"
