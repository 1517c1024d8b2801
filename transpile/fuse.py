"""Chains of elementwise operations on large arrays, evaluated by numexpr (``fuse=True``).

Not written yet: ``chains`` returns the body unchanged.
"""


def chains(body, names, namer):
    """``(body, bound)``: the body with its chains fused, and the objects the fused
    code reads by name (numexpr), to bind into the variant's namespace."""
    return body, {}
