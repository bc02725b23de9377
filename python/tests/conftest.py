"""Shared fixtures of the Python module's tests (CTest label `python`; run from the build tree, where CTest sets
PYTHONPATH to build/python and SPECWAVE_CLI to the build's `specwave`)."""

import os

import numpy as np
import pytest

import specwave


def tiny_case_dict(precision="fp64", shots=2):
    """A small 3-D case: 24^3 points of 10 m, two shots, a line of receivers, CPML of 6 points, 0.1 s; a homogeneous
    model and a Gaussian anomaly as the inversion's true model."""
    return {
        "name": "py-tiny",
        "grid": {"shape": [24, 24, 24], "spacing": 10.0},
        "model": {"type": "homogeneous", "velocity": 2000.0},
        "time": {"duration": 0.1},
        "shots": [{"sources": [{"position": [65.0, 115.0, 65.0 + 100.0 * s], "peak_frequency": 20.0}]}
                  for s in range(shots)],
        "receivers": {"lines": [{"start": [165.0, 115.0, 65.0], "end": [165.0, 115.0, 165.0], "count": 11}]},
        "scheme": {"order": 8},
        "boundary": {"pml_width": 6},
        "run": {"precision": precision, "progress_seconds": 0.01},
        "inversion": {"velocity_min": 1500.0, "velocity_max": 2400.0,
                      "true_model": {"type": "gaussian", "velocity": 2000.0, "anomaly": -150.0,
                                     "center": [115.0, 115.0, 115.0], "radius": 40.0}},
    }


@pytest.fixture
def tiny_case():
    return specwave.Case.from_dict(tiny_case_dict())


@pytest.fixture
def cli():
    path = os.environ.get("SPECWAVE_CLI")
    if not path or not os.path.exists(path):
        pytest.skip("SPECWAVE_CLI is not set to the build's specwave program (CTest sets it)")
    return path
