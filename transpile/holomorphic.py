"""``grad(f, holomorphic=True)``: the complex derivative ``f'(z)`` of a holomorphic
scalar ``f``, as JAX's ``grad(f, holomorphic=True)`` gives it: ``f``'s vjp with the
cotangent ``1``, which for a holomorphic function is ``1 * f'(z)`` in JAX's convention
(``transpile_runtime.complex_ops``). Its arguments must be complex, as JAX requires."""

import functools

import numpy as np


def entry(vjp_entry, f, indices):
    """The gradient entry over ``vjp_entry`` (``f``'s vjp with respect to ``indices``)."""

    @functools.wraps(f)
    def holomorphic_grad(*args):
        for i in indices:
            if not _all_complex(args[i]):
                raise TypeError(
                    f"{getattr(f, '__name__', 'f')}: grad with holomorphic=True needs "
                    f"complex arguments, but argument {i} is not complex (pass "
                    "x.astype(complex) or a complex number)"
                )
        return vjp_entry(*args, 1.0 + 0.0j)

    del holomorphic_grad.__wrapped__
    holomorphic_grad.__transpile_vjp__ = vjp_entry
    return holomorphic_grad


def _all_complex(value):
    if isinstance(value, dict):
        return all(_all_complex(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(_all_complex(v) for v in value)
    return np.iscomplexobj(value)
