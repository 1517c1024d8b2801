"""The stages of a shape variant (``pipeline.VARIANT_STAGES``): from the generic
gradient, one operation per line, and what its probe observed on a first call, the
function a later call with that signature runs. The entry (``backend/dispatch.py``)
runs them, passed down the list in ``ir.Context.variant_stages``."""
