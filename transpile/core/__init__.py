"""What every stage stands on: the records the stages pass (``ir``), building and
walking gast nodes (``nodes``), errors, the control-flow graph and its solver (``cfg``),
the def-use index (``defuse``), printing and compiling source (``printer``, ``emit``),
rule templates (``template``), the names a generated function relies on
(``assumptions``), recursion frames, caches, and the compiler's own housekeeping.
Imports nothing else of the compiler."""
