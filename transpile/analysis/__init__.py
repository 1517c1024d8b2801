"""Facts about the normalized function that later stages ask: which names hold lists
(``kinds``), which values are varied and useful (``activity``), which arguments are cut
off (``cuts``), what memory values may share (``views``) and the refusals it implies
(``aliasing``, ``effect_calls``), scalar-ness (``scalars``), composite shifts
(``composites``)."""
