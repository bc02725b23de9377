#!/usr/bin/env python3
"""specwave's forward modelling as a PyTorch autograd.Function, checked by torch.autograd.gradcheck (fp64).

    PYTHONPATH=build/python python3 examples/python/torch_autograd.py

`Forward.apply(v)` maps a velocity tensor (nz, ny, nx) to the traces of every shot, (n_shots, n_receivers, nt); its
backward is the adjoint (Operator.adjoint at v), so any torch loss of the traces gets dL/dv exactly. gradcheck compares
it with finite differences of the forward along random directions on a tiny case.
"""
import numpy as np
import torch

import specwave


def tiny_case():
    return specwave.Case.from_dict({
        "name": "torch-tiny",
        "grid": {"shape": [18, 18, 18], "spacing": 10.0},
        "model": {"type": "homogeneous", "velocity": 2000.0},
        "time": {"duration": 0.08},
        "shots": [{"sources": [{"position": [75.0, 75.0, 55.0], "peak_frequency": 15.0}]}],
        "receivers": {"lines": [{"start": [95.0, 75.0, 55.0], "end": [95.0, 75.0, 95.0], "count": 3}]},
        "boundary": {"pml_width": 4},
        "run": {"precision": "fp64"},
    })


class Forward(torch.autograd.Function):
    """traces = F(v); backward: dL/dv = J^T dL/dtraces (the adjoint of the Born operator at v)."""

    @staticmethod
    def forward(ctx, velocity, op):
        v = velocity.detach().cpu().numpy().astype(np.float64)
        ctx.op, ctx.v = op, v
        return torch.from_numpy(np.stack(op.forward(v))).to(velocity)

    @staticmethod
    def backward(ctx, grad_traces):
        r = np.ascontiguousarray(grad_traces.detach().cpu().numpy().astype(np.float64))
        image = ctx.op.adjoint(ctx.v, r)
        return torch.from_numpy(image).to(grad_traces), None


def main():
    case = tiny_case()
    op = specwave.Operator(case, velocity_max=2500.0)  # dt stays stable for every velocity below 2500 m/s
    v = torch.full(case.shape, 2000.0, dtype=torch.float64)
    v = v + 50.0 * torch.rand(case.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    v.requires_grad_(True)
    traces = Forward.apply(v, op)
    print(f"traces {tuple(traces.shape)}, peak {traces.abs().max().item():.3e}")
    # gradcheck perturbs every point: check the Jacobian on a few points only, through a wrapper that varies them
    idx = [(8, 8, 8), (6, 9, 7), (10, 7, 9)]

    def f(values):
        w = v.detach().clone()
        for k, (i, j, l) in enumerate(idx):
            w[i, j, l] = values[k]
        return Forward.apply(w, op)

    values = torch.tensor([v[i].item() for i in idx], dtype=torch.float64, requires_grad=True)
    # The Jacobian's entries are ~1e-9 (traces per m/s): gradcheck's default absolute tolerance would pass anything,
    # so it is set a million times below the largest entry, with a relative one of 1e-4 (central differences with
    # eps = 1 m/s err by ~ (eps / v)^2 = 2.5e-7 relative). A backward scaled by 1.01 fails this check.
    scale = torch.autograd.functional.jacobian(f, values).abs().max().item()
    ok = torch.autograd.gradcheck(f, (values,), eps=1.0, atol=1e-6 * scale, rtol=1e-4, raise_exception=False)
    print(f"gradcheck: {'passed' if ok else 'FAILED'} (largest Jacobian entry {scale:.3e}, atol {1e-6 * scale:.1e}, "
          f"rtol 1e-4)")
    loss = (traces ** 2).sum()
    loss.backward()
    print(f"loss {loss.item():.6e}, |dL/dv| max {v.grad.abs().max().item():.3e}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
