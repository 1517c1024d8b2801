"""``scipy.integrate``: ``odeint``, differentiated by the adjoint method. Loaded only
where scipy is installed (``rules.optional_families``).

``ys = odeint(func, y0, t, args=(theta,))`` is differentiated in ``y0``, in each
numeric entry of ``args`` and in the times ``t``: ``scipy_ops`` integrates the adjoint
ODE backward from the last time to the first, once for all three. Its right-hand side
needs the vector-Jacobian products of the user's ``func``, which this library makes:
the template reads ``vjp`` (``transpile.vjp``, registered by ``api`` in
``declare.ENTRIES`` and bound into the generated code's namespace by ``declare.binds``,
since no runtime module may import the compiler, nor a rule the compiler above it), and
the helper calls it with ``func`` when the gradient runs, so ``func`` may be any
function the compiler can differentiate, passed in or global.

The solver options ``rtol``, ``atol``, ``mxstep``, ``hmax`` and ``tfirst`` apply to the
backward integration too; ``Dfun`` is used by the forward one only. A call with another
option (``full_output``, ``tcrit``, ...) has no rule, and a differentiated one is
refused.

In forward mode (``jvp``) the sensitivity equations are integrated forward with the
tangent (``scipy_ops.odeint_tangent_y0``, ``_args`` and ``_t``: the augmented system
``[y, v]`` with ``dv/ds = df/dy v + df/dargs targs``, one integration per tangent),
calling the Jacobian-vector products of ``func`` that this library's ``jvp`` makes
(bound in as ``vjp`` is). Not yet: second derivatives through ``odeint`` (its helpers
have no rules of their own); a call differentiated twice is refused, naming the helper.
"""

from scipy import integrate

from transpile.core.template import d
from transpile.rules.declare import ENTRIES, VARIES, binds, rule
from transpile_runtime import scipy_ops

vjp, jvp = ENTRIES["vjp"], ENTRIES["jvp"]  # the names the templates below read


@rule(integrate.odeint, shape=VARIES)
@binds(vjp=vjp, jvp=jvp)
def odeint(
    y,
    func,
    y0,
    t,
    args=(),
    _Dfun=None,
    _rtol=None,
    _atol=None,
    _mxstep=0,
    _hmax=0.0,
    _tfirst=False,
):
    # the three helpers share one backward integration (scipy_ops.odeint_adjoint)
    d[y0] += scipy_ops.odeint_adjoint_y0(
        d[y],
        y,
        func,
        y0,
        t,
        args,
        vjp,
        rtol=_rtol,
        atol=_atol,
        mxstep=_mxstep,
        hmax=_hmax,
        tfirst=_tfirst,
    )
    d[t] += scipy_ops.odeint_adjoint_t(
        d[y],
        y,
        func,
        y0,
        t,
        args,
        vjp,
        rtol=_rtol,
        atol=_atol,
        mxstep=_mxstep,
        hmax=_hmax,
        tfirst=_tfirst,
    )
    d[args] += scipy_ops.odeint_adjoint_args(
        d[y],
        y,
        func,
        y0,
        t,
        args,
        vjp,
        rtol=_rtol,
        atol=_atol,
        mxstep=_mxstep,
        hmax=_hmax,
        tfirst=_tfirst,
    )
    # forward mode: one integration of the sensitivity equations per tangent (scipy_ops.
    # odeint_forward); here ``t`` is odeint's times, and t[t] still reads their tangent
    t[y] += scipy_ops.odeint_tangent_y0(
        t[y0],
        y,
        func,
        y0,
        t,
        args,
        jvp,
        rtol=_rtol,
        atol=_atol,
        mxstep=_mxstep,
        hmax=_hmax,
        tfirst=_tfirst,
    )
    t[y] += scipy_ops.odeint_tangent_args(
        t[args],
        y,
        func,
        y0,
        t,
        args,
        jvp,
        rtol=_rtol,
        atol=_atol,
        mxstep=_mxstep,
        hmax=_hmax,
        tfirst=_tfirst,
    )
    t[y] += scipy_ops.odeint_tangent_t(
        t[t],
        y,
        func,
        y0,
        t,
        args,
        jvp,
        rtol=_rtol,
        atol=_atol,
        mxstep=_mxstep,
        hmax=_hmax,
        tfirst=_tfirst,
    )
