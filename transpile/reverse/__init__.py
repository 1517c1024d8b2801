"""Reverse mode: the primal sweep and the raw adjoint from rule templates (``raw``),
user functions called (``callees``), the output's seed (``seeding``), the tape
(``record``) and the functions to compile (``assemble``)."""
