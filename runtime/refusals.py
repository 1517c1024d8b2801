"""Refusals the runtime's helpers make of what they are given, where an operation has
no gradient on every numpy (or none at all): they raise, never return a guess."""


def unless_three_vectors(n_a, n_b):
    """Refuse ``np.cross`` of 2-vectors on every numpy: numpy 2.0 deprecated them and
    2.5 raises for them, so a gradient that works on one numpy would fail on the next."""
    if n_a != 3 or n_b != 3:
        raise ValueError(
            f"np.cross of {n_a}- and {n_b}-vectors: transpile differentiates the cross "
            "product of 3-vectors only (numpy deprecated 2-vectors in 2.0 and refuses "
            "them from 2.5); give 2-vectors a zero third component, or write the z of "
            "the product as a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]"
        )
