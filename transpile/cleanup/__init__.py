"""Rewrites that make generated code economical and readable, used by reverse mode,
forward mode and the back end alike: symbolic zeros (``zeros``), copies between
adjoints (``copies``), signs, dead code (``deadcode``), values kept for their shape
(``shapes``), ``tidy``, ``inline``, ownership of returned arrays, buffer reuse."""
