"""specwave: 3-D seismic wave simulation and inversion, from Python (docs/python.md).

The same engine as the `specwave` command: a case is read from a TOML file or built from a dict with the same keys
(the same checks and messages), and runs return numpy arrays.

    import specwave
    case = specwave.Case.from_file("cases/demo/demo.toml")
    print(case.plan().dt)
    result = specwave.forward(case)                # traces of every shot, (n_receivers, nt) each
    op = specwave.Operator(case)                   # a fixed discretisation for an inversion loop
    g = op.gradient(model, observed)               # misfit, gradient (and illumination)

Errors of the engine raise specwave.Error (its `code` is the CLI's exit code, `category` its name, e.g.
"invalid_case"); bad arrays raise ValueError or TypeError before anything runs; Ctrl-C raises KeyboardInterrupt.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence, Union

import numpy as np

from ._core import Case, Error, Plan, _forward, _Operator

__all__ = ["Case", "Error", "Plan", "ForwardResult", "Operator", "forward", "gradient", "born", "adjoint"]

logger = logging.getLogger("specwave")

Progress = Union[None, bool, str, Callable[[str], None]]


def _progress_sink(progress: Progress):
    """The callable that receives each progress line, or None for no lines.

    None or False: no lines; "logging" (or True): the logger "specwave" at INFO; "stderr": sys.stderr; a callable:
    called with each line (no newline).
    """
    if progress is None or progress is False:
        return None
    if progress is True or progress == "logging":
        return logger.info
    if progress == "stderr":
        return lambda line: print(line, file=sys.stderr, flush=True)
    if callable(progress):
        return progress
    raise ValueError(f"progress = {progress!r}: use None, 'logging', 'stderr' or a callable taking one line")


@dataclass
class ForwardResult:
    """What forward() returns. Arrays are C-ordered; positions are (z, y, x) in metres."""

    traces: list  # per shot: (n_receivers, nt), in the run precision (float32 or float64), as traces.h5 holds them
    receivers: object  # (n_receivers, 3); with receivers per shot, a list of each run shot's (n, 3)
    sources: list  # per shot: (n_sources, 3)
    shots: list  # the shots run (indices into the case's shots)
    dt: float  # s, the sample interval of the traces (the simulation's time step)
    nt: int  # samples per trace; sample n is at time n * dt
    final_fields: Optional[list] = None  # per shot: u at t = nt dt (after the last step), (nz, ny, nx) float64
    snapshots: Optional[list] = None  # per shot: a list of (nz, ny, nx) float64 fields
    snapshot_steps: Optional[list] = None  # per shot: the step n of each snapshot
    times: np.ndarray = field(init=False)

    def __post_init__(self):
        self.times = np.arange(self.nt) * self.dt


def forward(case: Case, model: Optional[np.ndarray] = None, *, shots: Optional[Sequence[int]] = None,
            final_field: bool = False, snapshot_every: int = 0, progress: Progress = None) -> ForwardResult:
    """Forward modelling of the case's shots (all, or `shots`), as `specwave forward` runs them, without files.

    model: velocities (m/s), shape (nz, ny, nx), float32 or float64, C-contiguous, in place of the case's model
    (the plan, dt included, is then made for it). The backend, precision and method are the case's
    (case.backend, case.precision are settable).
    """
    out = _forward(case, model, final_field, snapshot_every, shots, _progress_sink(progress))
    return ForwardResult(**out)


class Operator:
    """The modelling operators of a case at one fixed discretisation, for inversion loops.

    The plan (dt, nt, absorbing profiles, acquisition) is made once, from the case as given: its model fixes dt
    unless the case sets time.dt, or velocity_max (m/s; default the case's inversion.velocity_max) is larger: give
    the largest velocity the loop may reach.
    Models are in the case's parameterisation (inversion.parameterisation: velocity in m/s, or slowness squared),
    shape (nz, ny, nx). Traces are float64, per shot (n_receivers, nt).

    - forward(model): synthetic traces of every shot (or `shots`)
    - gradient(model, observed): least-squares misfit J = 1/2 sum dt (d - d_obs)^2 and dJ/dmodel
    - born(model, dm): linearised traces F dm
    - adjoint(model, residual): the image F^T r, the exact transpose of born: <born(dm), r> = <dm, adjoint(r)>
    """

    def __init__(self, case: Case, *, velocity_max: Optional[float] = None):
        self._op = _Operator(case, velocity_max)
        self.case = case.copy()
        self.plan: Plan = self._op.plan

    @property
    def n_shots(self) -> int:
        return self._op.n_shots

    @property
    def n_receivers(self) -> int:
        """The shots' receiver count (ValueError when shots with their own receivers have different counts)."""
        return self._op.n_receivers

    @property
    def receiver_counts(self) -> list:
        """Each shot's receiver count (shots may have their own receivers: docs/case-file.md)."""
        return self._op.receiver_counts

    @property
    def shape(self):
        return self.case.shape

    def forward(self, model, *, shots=None, progress: Progress = None) -> list:
        return self._op.forward(model, shots, _progress_sink(progress))

    def gradient(self, model, observed, *, illumination: bool = False, progress: Progress = None) -> dict:
        """{"misfit": float, "misfit_per_shot": (n_shots,), "gradient": (nz, ny, nx), "illumination": array or None}.

        observed: a list of (n_receivers, nt) arrays (one a shot; each shot's own count with receivers per shot) or
        one (n_shots, n_receivers, nt) array.
        """
        return self._op.gradient(model, observed, illumination, _progress_sink(progress))

    def born(self, model, perturbation, *, progress: Progress = None) -> list:
        return self._op.born(model, perturbation, _progress_sink(progress))

    def adjoint(self, model, residual, *, progress: Progress = None) -> np.ndarray:
        return self._op.adjoint(model, residual, _progress_sink(progress))


def _operator_for(case: Case, model):
    """An Operator planned for `model` (or the case's own model) and that model as an array."""
    c = case.copy()
    if model is not None:
        if case.parameterisation == "velocity":
            c.model = model
        else:  # the plan is made for the velocity of the slowness-squared model
            m = np.asarray(model, dtype=np.float64)
            c.model = np.ascontiguousarray(1.0 / np.sqrt(m)) if np.all(m > 0) else model
    op = Operator(c)
    if model is None:
        v = np.asarray(c.model, dtype=np.float64)
        model = v if case.parameterisation == "velocity" else 1.0 / (v * v)
    return op, model


def gradient(case: Case, observed, model=None, *, illumination: bool = False, progress: Progress = None) -> dict:
    """Misfit and gradient at `model` (default: the case's model), see Operator.gradient.

    The plan (dt) is made for `model`: `observed` must be sampled at that dt. Pass forward()'s result itself as
    `observed` to have its dt checked (a ValueError when it differs); or set the case's time.dt, or use one Operator
    for the observed data and the gradients.
    """
    observed_dt = getattr(observed, "dt", None)
    if observed_dt is not None:
        observed = observed.traces
    op, model = _operator_for(case, model)
    if observed_dt is not None and observed_dt != op.plan.dt:
        raise ValueError(
            f"observed: sampled at dt = {observed_dt!r} s, but this gradient's plan (made for `model`) has dt = "
            f"{op.plan.dt!r} s, so the misfit would compare different times; set the case's time.dt, or use one "
            "Operator (a fixed dt) for the observed data and the gradients")
    return op.gradient(model, observed, illumination=illumination, progress=progress)


def born(case: Case, perturbation, model=None, *, progress: Progress = None) -> list:
    """Born (linearised) traces for a model perturbation, see Operator.born."""
    op, model = _operator_for(case, model)
    return op.born(model, perturbation, progress=progress)


def adjoint(case: Case, residual, model=None, *, progress: Progress = None) -> np.ndarray:
    """The adjoint of born: residual traces to a model-space image, see Operator.adjoint."""
    op, model = _operator_for(case, model)
    return op.adjoint(model, residual, progress=progress)
