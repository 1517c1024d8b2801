"""Survey: run many random feature programs (``feature_gen.py``) through
``test_property_features.check_program`` and count what happened to each.

    python tests/feature_survey.py N SEED [--known] [--out FILE.jsonl] [--only a,b]

Each program ends as one of: ``passed``; ``skipped`` (finite differences mean
nothing there, or a refusal the README lists under "Not yet", or a known refusal);
``wrong`` (a wrong number, a changed argument, a result sharing memory, a wrong
dtype: an AssertionError of a check); ``crashed`` (any other exception from the
library); ``refused`` (a ``TranspileError`` that is not an accepted one). Every
failure is appended to ``--out`` (JSON lines, as ``FEATURE_COLLECT`` writes them,
with the outcome added), and the counts per outcome and per entry point are
printed at the end. Not a test: a tool for the surveys the property's docstring
mentions.
"""

import argparse
import collections
import json
import os
import pathlib
import sys
import tempfile
import warnings

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))


def outcome(record):
    error = record["error"]
    if record["label"].endswith(("result", "inputs", "memory")) or record["label"] == (
        "first result"
    ):
        return "wrong"
    if error.startswith("TranspileError"):
        return "refused"
    return "crashed"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("n", type=int)
    parser.add_argument("seed", type=int)
    parser.add_argument("--known", action="store_true")
    parser.add_argument("--out", default=None)
    parser.add_argument("--only", default=None, help="comma-separated stages (and elementwise)")
    opts = parser.parse_args()
    out = opts.out or tempfile.mktemp(suffix=".jsonl")
    raw = out + ".raw"
    os.environ["FEATURE_COLLECT"] = raw
    os.environ["FEATURE_SEED"] = str(opts.seed)
    warnings.simplefilter("ignore")

    import test_property_features
    from feature_gen import feature_programs
    from hypothesis import given, seed, settings
    from hypothesis.errors import UnsatisfiedAssumption
    from test_property_features import _settings, check_program

    skips = collections.Counter()  # why programs were skipped (refusals accepted, ...)
    original_skip = test_property_features._skip

    def counted_skip(reason):
        skips[reason] += 1
        original_skip(reason)

    test_property_features._skip = counted_skip

    folder = pathlib.Path(tempfile.mkdtemp(prefix="survey_"))
    counts = collections.Counter()
    by_entry = collections.defaultdict(collections.Counter)

    only = set(opts.only.split(",")) | {"elementwise"} if opts.only else None

    @settings(_settings(opts.n), phases=["generate"])
    @seed(opts.seed)
    @given(program=feature_programs(known=opts.known, only=only))
    def run(program):
        before = os.path.getsize(raw) if os.path.exists(raw) else 0
        try:
            check_program(program, folder)
            result = "passed"
        except UnsatisfiedAssumption:
            size = os.path.getsize(raw) if os.path.exists(raw) else 0
            if size == before:
                result = "skipped"
            else:
                with open(raw) as f:
                    f.seek(before)
                    first = json.loads(f.readline())
                result = outcome(first)
                first["outcome"] = result
                with open(out, "a") as o:
                    o.write(json.dumps(first) + "\n")
        counts[result] += 1
        by_entry[program.entry][result] += 1
        if result == "skipped":
            raise UnsatisfiedAssumption()

    try:
        run()
    except Exception as error:  # hypothesis: too many skipped, or a hard failure
        print("stopped:", type(error).__name__, str(error)[:300])
    print(f"N={opts.n} seed={opts.seed} known={opts.known} out={out}")
    print("total", sum(counts.values()), dict(counts))
    for entry in sorted(by_entry):
        print(f"  {entry:18s}", dict(by_entry[entry]))
    print("skipped because:")
    for reason, n in skips.most_common():
        print(f"  {n:6d} {reason}")


if __name__ == "__main__":
    main()
