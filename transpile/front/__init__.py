"""The front end: the user's function read (``parse``), a gradient read again
(``higher``), unsupported syntax refused (``fence``), names reserved (``naming``),
methods and objects (``objects``), and A-normal form (``normalize``, with ``desugar``,
``lower``, ``rename``, ``dict_loops``), on which in-place updates another name would
see are refused (``inplace``), then ``snapshot`` and ``auxiliary``. Built on ``core``
and ``rules``."""
