"""A function using ``match`` (Python >= 3.10): imported only where it parses."""

import numpy as np


def uses_match(x, k):
    match k:  # ERR
        case 1:
            y = x * 2.0
        case _:
            y = x
    return np.sum(y)
