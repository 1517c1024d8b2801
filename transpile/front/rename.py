"""Renaming of re-assigned names, so straight-line code needs no tape.

``run`` gives each re-assignment of a name at the top level a new version (``h2``).
Inside ``if``/``for``/``while`` names keep one name: there the adjoint restores
overwritten values from the tape instead.
"""

import gast

from transpile.core.nodes import assign, is_atom, name, name_nodes


def run(tree, namer):
    """Give each re-assignment of a name at the top level a new version (``h2``).

    Inside ``if``/``for``/``while`` names are not renamed: there the adjoint
    restores overwritten values from the tape instead. A statement inside them that
    reads the name it writes (``x = x * x``) is split through a temporary, so its
    adjoint can see both the old and the new value.
    """
    env = {a.id: a.id for a in tree.args.args}
    out = []
    for stmt in tree.body:
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            _substitute_loads(stmt.value, env)
            target = stmt.targets[0].id
            new = namer.version(target) if target in env else target
            env[target] = new
            stmt.targets[0].id = new
            out.append(stmt)
            continue
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            names, reads = _names_in(stmt)
            for node in names:
                if node.id in env:
                    node.id = env[node.id]
            for node in names:
                if isinstance(node.ctx, gast.Store):
                    env.setdefault(node.id, node.id)
            _split_self_reads(stmt, namer, reads)
            out.append(stmt)
            continue
        _substitute_loads(stmt, env)
        out.append(stmt)
    tree.body = out
    return tree


def _substitute_loads(node, env):
    for n in name_nodes(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in env:
            n.id = env[n.id]


def _names_in(compound):
    """The names in the ``if``/``for``/``while`` statement ``compound`` (those of
    ``name_nodes``, in another order: each is renamed on its own), gathered statement
    by statement; and id(assignment to a name in its blocks) -> the names its value
    reads, which ``_split_self_reads`` then needs no walk of its own for."""
    names, reads, todo = [], {}, [compound]
    for s in todo:  # a queue: the loop reads what it appends
        if isinstance(s, (gast.If, gast.For, gast.While)):
            for head in (s.target, s.iter) if isinstance(s, gast.For) else (s.test,):
                names.extend(name_nodes(head))
            todo.extend(s.body)
            todo.extend(s.orelse)
            continue
        found = name_nodes(s)
        names.extend(found)
        if _assigns_a_name(s, found):  # its names: its target's, then its value's
            reads[id(s)] = found[1:]
    return names, reads


def _assigns_a_name(s, found):
    """Whether ``s`` is ``name = value``, ``found`` its names with the name first."""
    return (
        isinstance(s, gast.Assign)
        and len(s.targets) == 1
        and bool(found)
        and found[0] is s.targets[0]
        and found[0].annotation is None
    )


def _split_self_reads(compound, namer, reads):
    for field in ("body", "orelse"):
        block = getattr(compound, field, None)
        if not block:
            continue
        new = []
        for s in block:
            if isinstance(s, (gast.If, gast.For, gast.While)):
                _split_self_reads(s, namer, reads)
            elif (
                isinstance(s, gast.Assign)
                and isinstance(s.targets[0], gast.Name)
                and not is_atom(s.value)
                and _reads(s, s.targets[0].id, reads)
            ):
                t = namer.temp()
                target = s.targets[0].id
                s.targets[0].id = t
                new.append(s)
                new.append(assign(target, name(t), s))
                continue
            new.append(s)
        setattr(compound, field, new)


def _reads(assignment, target, reads):
    """Whether the value of ``assignment`` reads the name ``target``."""
    found = reads.get(id(assignment))
    if found is None:
        found = name_nodes(assignment.value)
    return any(n.id == target for n in found)
