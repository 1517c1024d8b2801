"""Forward mode: the function with each active line followed by its tangent
(``tangents``)."""
