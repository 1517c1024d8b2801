"""The back end: the entry each gradient is called through (``dispatch``: argument
checks, locks, the cache of shape variants) and what makes shape variants (``probe``,
``specialize``, ``algebra``, ``fixed_shapes``, ``blocks``, ``fuse``), and the
arguments' checks (``arguments``)."""
