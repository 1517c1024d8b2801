"""Move transpile/ modules into stage folders and rewrite every import of them.

Idempotent: run it again after merging a branch that edited or added flat modules
(a flat module still named in LAYOUT is moved; imports of moved modules anywhere
in transpile/, runtime/, tests/, benchmarks/, notebooks/*.py are rewritten).
Usage: python relayout.py REPO [--no-move]
"""
import re, subprocess, sys
from pathlib import Path

LAYOUT = {
    "core": "ir nodes errors printer template cfg defuse emit assumptions tracebacks "
            "function_cache gcpause progress stack_room user_warnings recursion",
    "rules": "user_rules",
    "front": "parse lambda_source varargs higher through_tape fence inplace naming objects "
             "object_args bound_functions callables normalize desugar lower rename "
             "dict_loops snapshot auxiliary",
    "analysis": "kinds activity cuts aliasing effect_calls views scalars composites",
    "cleanup": "zeros copies signs deadcode shapes tidy inline ownership buffers",
    "reverse": "reverse=raw callees seeding record assemble",
    "forward": "forward=tangents",
    "backend": "dispatch probe specialize algebra blocks fuse arguments fixed_shapes",
}
FOLDER, NEW = {}, {}  # old module name -> folder, -> new module name
for _f, _ms in LAYOUT.items():
    for _m in _ms.split():
        _old, _, _new = _m.partition("=")
        FOLDER[_old], NEW[_old] = _f, _new or _old


def move(repo):
    for m, f in FOLDER.items():
        src = repo / "transpile" / f"{m}.py"
        if src.exists():
            (repo / "transpile" / f).mkdir(exist_ok=True)
            subprocess.run(["git", "mv", str(src), str(repo / "transpile" / f / f"{NEW[m]}.py")],
                           cwd=repo, check=True)


def _split_from_import(match):
    indent, names, tail = match.group(1), match.group(2), match.group(3)
    items = [n.strip() for n in names.replace("\n", " ").strip("() ").split(",") if n.strip()]
    groups = {}
    for it in items:
        base, _, alias = (s.strip() for s in it.partition(" as "))
        folder = FOLDER.get(base)
        key = f"transpile.{folder}" if folder else "transpile"
        if folder and NEW[base] != base:  # renamed: keep the name the importer uses
            it = f"{NEW[base]} as {alias or base}"
        groups.setdefault(key, []).append(it)
    lines = []
    for key in sorted(groups):
        lines.append(f"{indent}from {key} import {', '.join(groups[key])}")
    return "\n".join(lines) + tail


FROM_PKG = re.compile(r"^([ \t]*)from transpile import (\([^)]*\)|[^\n#]*?)([ \t]*(?:#[^\n]*)?\n)", re.M)


def _is_folder_use(name, after):
    """Whether ``transpile.<name>`` followed by ``after`` names the new folder ``name``
    (``transpile.reverse.raw``, ``from transpile.reverse import callees``) rather than
    the old module of that name."""
    if name not in LAYOUT:
        return False
    members = {NEW[m] for m, f in FOLDER.items() if f == name}
    m = re.match(r"\.(\w+)", after) or re.match(r" import \(?\s*(\w+)", after)
    return bool(m) and m.group(1) in members


def rewrite(text):
    def dotted(m):
        name = m.group(2)
        if _is_folder_use(name, text[m.end():m.end() + 80]):
            return m.group(0)
        folder = FOLDER.get(name)
        return f"{m.group(1)}transpile.{folder}.{NEW[name]}" if folder else m.group(0)

    def path(m):
        name = m.group(1)
        folder = FOLDER.get(name)
        return f"transpile/{folder}/{NEW[name]}.py" if folder else m.group(0)

    # transpile.<module> in from-imports, imports, strings and attribute chains
    text = re.sub(r"(^|[^\w.])transpile\.(\w+)(?=\b)", dotted, text)
    text = re.sub(r"(?<![\w/])transpile/(\w+)\.py\b", path, text)
    return FROM_PKG.sub(_split_from_import, text)


def main():
    repo = Path(sys.argv[1]).resolve()
    if "--no-move" not in sys.argv:
        move(repo)
    files = [p for d in ("transpile", "runtime", "tests", "benchmarks") for p in (repo / d).rglob("*.py")]
    files += list((repo / "notebooks").glob("*.py")) + list((repo / "notebooks").glob("*.md"))
    files += [repo / "README.md", repo / "benchmarks" / "README.md"]
    for p in files:
        t = p.read_text()
        n = rewrite(t)
        if n != t:
            p.write_text(n)
            print("rewrote", p.relative_to(repo))


if __name__ == "__main__":
    main()
