"""What a probe run of a generic gradient records for its specialization.

The probe is the generic gradient with every shape helper call and every
assignment reported: ``probe(site, helper, *args)`` records the arguments of a
helper call (``unbroadcast`` and friends) and returns its result, and
``seen(index, value)`` records a statement's target (in a loop's body, what every
iteration saw). ``meta`` reduces a value
to what the rewrite needs: kind, shape, dtype and type.
"""

import gast

from transpile.core.ir import Annotation, annotate, annotation
from transpile.core.nodes import const, name, name_nodes, names_and_calls
from transpile.rules.declare import helper_of


def meta(value):
    """What the specializer needs to know about a value: ``(kind, shape, dtype, type)``;
    for Python ints the third entry is the value itself."""
    if type(value) is float:
        return ("float", (), None, float)
    if type(value) in (int, bool):
        return ("int", (), value, type(value))
    if isinstance(value, tuple) and all(type(n) is int for n in value):
        return ("tuple", None, value, tuple)
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if isinstance(shape, tuple) and dtype is not None:
        return ("array", shape, dtype, type(value))
    return ("other", None, None, type(value))


def merged(old, new, shape_args=()):
    """What one helper call site's two observations (a tuple of argument metas each,
    from two iterations of a loop) say of every iteration: equal metas as they are; an
    argument of the same shape but another type or dtype (a Python float that became a
    numpy scalar; at a position in ``shape_args``, the shape a loop recorded for an
    array) as an array of that shape, of unknown type; any other difference (or an
    earlier one: ``old`` None) makes the site None, which stays generic."""
    if old == new or old is None:
        return old
    if len(old) != len(new):
        return None
    out = []
    for i, (a, b) in enumerate(zip(old, new)):
        if a != b:
            shapes = {_shape_seen(m, i in shape_args) for m in (a, b)}
            if len(shapes) != 1 or None in shapes:
                return None
            same = a[3] is b[3] and a[2] == b[2]
            a = ("array", shapes.pop(), a[2] if same else None, a[3] if same else object)
        out.append(a)
    return tuple(out)


def _shape_seen(m, recorded):
    """The shape a meta shows of an array or a number, or (where ``recorded``) of the
    shape recorded for an array; else None."""
    if m[0] in ("array", "float"):
        return m[1]
    return m[2] if recorded and m[0] == "tuple" else None


def number_sites(body, ops_name):
    """Tag each call of a specialized helper with a site number; returns the count."""
    count = 0
    for stmt in body:
        for node in names_and_calls(stmt)[1]:
            if helper_name(node, ops_name):
                annotate(node, Annotation.SITE, count)
                count += 1
    return count


def helper_name(node, ops_name):
    """The name of the helper a call calls if the specializer rewrites it (its declaration
    says ``specialized``), else None."""
    if not isinstance(node, gast.Call) or not isinstance(node.func, gast.Attribute):
        return None
    f = node.func
    if getattr(f.value, "id", None) != ops_name or node.keywords:
        return None
    declared = helper_of(f.attr)
    return f.attr if declared is not None and declared.specialized else None


def probe_body(body, ops_name, probe_name, seen_name, params=()):
    """``body`` with every helper call and every assignment reported.

    ``probe_name(site, helper, *args)`` records the arguments of a helper call and
    returns its result; ``seen_name(index, value)`` records a statement's target, and
    at the start of a loop's body each name the loop binds and reads that is bound
    before it (a parameter, or a line before the loop). The two names are chosen to
    clash with nothing the body reads. Statements without a helper call are shared
    with ``body``, not copied: the probe is only printed."""
    reported = _reported_body(body, probe_name, seen_name, None, set(params))
    return _free_when_dead(reported)


def _reported_body(body, probe_name, seen_name, path, bound):
    """The statements of ``body``, each followed by the report of its target: at the top
    (``path`` None) under its position, in a loop's body under the tuple of positions
    that leads to it (met once per iteration: ``observe`` merges what each one saw).
    ``bound``: the names surely bound before ``body`` runs."""
    out, bound = [], set(bound)
    for i, stmt in enumerate(body):
        key = i if path is None else (*path, i)
        reported = _report_sites(stmt, probe_name)
        if isinstance(stmt, gast.For):
            inner = key if path is not None else (key,)
            names = name_nodes(stmt)
            stored = {n.id for n in names if isinstance(n.ctx, gast.Store)}
            carried = sorted(stored & bound & {n.id for n in names if isinstance(n.ctx, gast.Load)})
            starts = [_report(seen_name, (*inner, n), n) for n in carried]
            body_reported = _reported_body(reported.body, probe_name, seen_name, inner, bound)
            reported = _copied(reported, body=starts + body_reported)
        out.append(reported)
        target = single_target(stmt)
        if target is not None:
            out.append(_report(seen_name, key, target))
            bound.add(target)
    return out


def _report(seen_name, key, target):
    call = gast.Call(func=name(seen_name), args=[const(key), name(target)], keywords=[])
    return gast.Expr(value=call)


def _copied(node, **fields):
    new = node.__class__.__new__(node.__class__)
    new.__dict__.update(node.__dict__, **fields)
    return new


def observe(seen, index, value):
    """Record in ``seen`` the meta of the target of the statement at ``index``: the first
    one for a statement at the top; for one in a loop's body (a tuple ``index``; ending
    in a name for that name at the start of the body), the meta every iteration saw,
    or None where they differ (the rewrite then knows nothing of that name there)."""
    new = meta(value)
    if not isinstance(index, tuple):
        seen.setdefault(index, new)
    elif index not in seen:
        seen[index] = new
    elif seen[index] != new:
        seen[index] = None


def _report_sites(node, probe_name):
    """``node``, or a copy of it along the paths to its numbered helper calls, which go
    through ``probe_name``; what holds no such call is shared, not copied. One walk,
    deepest first, so a call's arguments are rewritten before the call is wrapped."""
    if node.__class__ in _LEAVES:
        return node
    changed = {}
    for field in node._fields:
        value = getattr(node, field, None)
        if value.__class__ is list:
            new = [_report_sites(v, probe_name) if isinstance(v, gast.AST) else v for v in value]
            if any(a is not b for a, b in zip(new, value)):
                changed[field] = new
        elif isinstance(value, gast.AST) and value._fields:
            new = _report_sites(value, probe_name)
            if new is not value:
                changed[field] = new
    if changed:
        node, old = node.__class__.__new__(node.__class__), node
        node.__dict__.update(old.__dict__, **changed)
    return _reported(node, probe_name)


_LEAVES = {gast.Name, gast.Constant}


def _reported(node, probe_name):
    site = annotation(node, Annotation.SITE)
    if site is None or not isinstance(node, gast.Call):
        return node
    return gast.Call(func=name(probe_name), args=[const(site), node.func, *node.args], keywords=[])


def _free_when_dead(body):
    """``body`` with ``del t`` after the last read of each value its own statements made
    (a loop's may be unbound),
    so that the first call holds no more arrays at once than the variant made from it."""
    made, last = set(), {}
    for i, s in enumerate(body):
        in_block = isinstance(s, (gast.For, gast.If, gast.While))  # may not run at all
        for n in name_nodes(s):
            if isinstance(n, gast.Name):
                if isinstance(n.ctx, gast.Load):
                    last[n.id] = i
                elif isinstance(n.ctx, gast.Store) and not in_block:
                    made.add(n.id)
    dead_after = {}
    for n, i in last.items():
        if n in made and not isinstance(body[i], gast.Return):
            dead_after.setdefault(i, []).append(n)
    out = []
    for i, s in enumerate(body):
        out.append(s)
        if i in dead_after:
            targets = [name(n, gast.Del()) for n in sorted(dead_after[i])]
            out.append(gast.Delete(targets=targets))
    return out


def single_target(stmt):
    if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
        return stmt.targets[0].id
    if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
        return stmt.target.id
    return None
