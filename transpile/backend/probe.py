"""What a probe run of a generic gradient records for its specialization.

The probe is the generic gradient with every shape helper call and every
assignment reported: ``probe(site, helper, *args)`` records the arguments of a
helper call (``unbroadcast`` and friends) and returns its result, and
``seen(index, value)`` records a statement's target (in a loop's body, what every
iteration saw). ``meta`` reduces a value
to what the rewrite needs: kind, shape, dtype and type.
"""

from dataclasses import dataclass

import gast
import numpy as np

from transpile.core.ir import Annotation, annotate, annotation
from transpile.core.nodes import const, header, loads_and_stores, name, names_and_calls
from transpile.rules.declare import helper_of


def meta(value):
    """What the specializer needs to know about a value: ``(kind, shape, dtype, type)``;
    for Python ints the third entry is the value itself."""
    cls = value.__class__
    if cls is np.ndarray:  # most values, at once
        return ("array", value.shape, value.dtype, cls)
    by_type = _META_OF_TYPE.get(cls)
    if by_type is not None:  # most values a loop's scalar lines see: one lookup
        return by_type
    if type(value) in (int, bool):
        return ("int", (), value, type(value))
    if isinstance(value, tuple) and all(type(n) is int for n in value):
        return ("tuple", None, value, tuple)
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if isinstance(shape, tuple) and dtype is not None:
        return ("array", shape, dtype, type(value))
    return ("other", None, None, type(value))


# Types whose every value has the same meta: a float, and a numpy scalar (its shape is
# always (), its dtype fixed by its type).
_META_OF_TYPE = {
    float: ("float", (), None, float),
    **{
        t: ("array", (), np.dtype(t), t)
        for t in set(np.sctypeDict.values())
        if issubclass(t, (np.number, np.bool_))
    },
}


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


@dataclass
class Sites:
    """What ``number_sites`` read off a body as it numbered its helper calls."""

    holding: set  # the ids of the statements (at any depth) that hold a site
    loop_names: dict  # id of each ``for`` (at any depth) -> its ``loads_and_stores``


def number_sites(body, ops_name) -> Sites:
    """Tag each call of a specialized helper with a site number; returns the statements
    that hold one, which alone the probe copies to report, and the names each loop reads
    and binds, which the probe asks of every loop (one walk of the body for both)."""
    sites = Sites(set(), {})
    _number_sites(body, ops_name, sites, 0)
    return sites


def _number_sites(body, ops_name, sites, count):
    """``number_sites`` of ``body``, numbering from ``count``: ``(the next number, the
    names body reads, the names it binds)``."""
    loads, stores = set(), set()
    for stmt in body:
        start = count
        names, calls = names_and_calls(header(stmt))
        for node in calls:
            if helper_name(node, ops_name):
                annotate(node, Annotation.SITE, count)
                count += 1
        _add_names(names, loads, stores)
        if isinstance(stmt, (gast.For, gast.If, gast.While)):
            inner_loads, inner_stores = set(), set()
            if isinstance(stmt, gast.For):
                _add_names(names_and_calls(stmt.target)[0], inner_loads, inner_stores)
                _add_names(names, inner_loads, inner_stores)
            for block in (stmt.body, stmt.orelse):
                count, block_loads, block_stores = _number_sites(block, ops_name, sites, count)
                inner_loads |= block_loads
                inner_stores |= block_stores
            if isinstance(stmt, gast.For):
                sites.loop_names[id(stmt)] = (inner_loads, inner_stores)
            loads |= inner_loads
            stores |= inner_stores
        if count > start:
            sites.holding.add(id(stmt))
    return count, loads, stores


def _add_names(names, loads, stores):
    for n in names:
        ctx = n.ctx.__class__
        if ctx is gast.Load:
            loads.add(n.id)
        elif ctx is gast.Store:
            stores.add(n.id)


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


def probe_body(body, ops_name, probe_name, seen_name, params=(), sites=None):
    """``(body with every helper call and every assignment reported, keys)``.

    ``probe_name(site, helper, *args)`` records the arguments of a helper call and
    returns its result; ``seen_name(k, value)`` records a statement's target (and
    returns it: ``x = seen(k, value)`` where the statement is an assignment) and, at
    the start of a loop's body, each name the loop binds and reads that is bound
    before it (a parameter, or a line before the loop); ``keys[k]`` is where (see
    ``observe``). The two names are chosen to clash with nothing the body reads.
    Statements without a helper call or an assignment are shared with ``body``, not
    copied: the probe is only printed. (An int ``k`` and the report inside the
    assignment: Python compiles a long probe in half the time it takes for a
    statement of its own with a tuple of positions.) ``sites``: what
    ``number_sites`` found, where known: the statements that hold no helper call
    are not walked for one, and a loop's names are not gathered again.

    Returns ``(body, keys, known)``: ``known`` holds the metas of what the body does
    not report because the probe knows them before it runs (a constant bound at the
    top, ahead of any block), for the observations to start from. A loop reports its
    carried names in one call, ``seen(k, (a, b, ...))`` with ``keys[k]`` the list of
    their positions: Python compiles one tuple faster than a statement per name; and
    each run of assignments in its body the same way, where the run ends (``report``)."""
    reporter = _Reporter(probe_name, seen_name, sites)
    groups = reporter.groups(body, set(params))
    return _free_when_dead(groups), reporter.keys, reporter.known


class _Reporter:
    def __init__(self, probe_name, seen_name, sites):
        self.probe_name, self.seen_name = probe_name, seen_name
        self.holding = None if sites is None else sites.holding
        self.loop_names = {} if sites is None else sites.loop_names
        self.keys = []  # k -> the position of the statement ``seen(k, ...)`` reports
        self.known = {}  # position -> the meta of a constant the body does not report

    def groups(self, body, bound):
        """For each statement at the top of ``body``: its reported statements, the
        names they read and the names they bind outside a block (a block's may not run
        at all): what ``_free_when_dead`` needs, read off the statement before it was
        reported, so that a loop is walked once."""
        groups, bound = [], set(bound)
        straight = True  # no block yet: every statement runs once the probe returns
        for i, stmt in enumerate(body):
            names = self.names_of(stmt)
            reads = set(names[0])
            binds = set()
            straight = straight and stmt.__class__ in _SIMPLE
            if isinstance(stmt, gast.For):
                reported, targets = self.loop(stmt, names, (i,), bound)
                reads |= targets  # the loop's body reports them
            elif straight and _bound_constant(stmt):
                self.known[i] = meta(stmt.value.value)
                reported = [stmt]
            else:
                reported = self.statement(stmt, i)
                if not isinstance(stmt, (gast.If, gast.While)):
                    binds = names[1]
            target = single_target(stmt)
            if target is not None:
                reads.add(target)
                bound.add(target)
            groups.append((reported, reads, binds))
        return groups

    def names_of(self, stmt):
        """``loads_and_stores(stmt)``, as ``number_sites`` found it for a loop."""
        found = self.loop_names.get(id(stmt))
        return loads_and_stores(stmt) if found is None else found

    def body(self, body, path, bound, targets):
        """The statements of a loop's ``body`` reported, each under the tuple of
        positions that leads to it (met once per iteration: ``observe`` merges what
        each one saw); ``path``: the loop's. ``bound``: the names surely bound before
        ``body`` runs; ``targets`` gets every target reported."""
        out, bound = [], set(bound)
        run = {}  # target -> key of the assignments since the last report
        for i, stmt in enumerate(body):
            key = (*path, i)
            target = single_target(stmt)
            if target in run or (target is None and stmt.__class__ is not gast.Expr):
                out += self.report(run)
            if isinstance(stmt, gast.For):
                reported, inner = self.loop(stmt, self.names_of(stmt), key, bound)
                out += reported
                targets |= inner
            elif target is not None:
                out.append(self.reported(stmt))
                run[target] = key
            else:
                out += self.statement(stmt, key)
            if target is not None:
                bound.add(target)
                targets.add(target)
        return out + self.report(run)

    def report(self, run):
        """Where a run of assignments in a loop's body ends (at a block, a jump, a name
        bound again, or the end of the body; a call statement such as ``tape.push(x)``
        binds nothing and goes on), one call reports what each bound: each holds what
        its assignment gave it, since nothing between binds it again or leaves the run,
        and one call per run costs a fraction of one per line. Empties ``run``."""
        if not run:
            return []
        values = gast.Tuple(elts=[name(n) for n in run], ctx=gast.Load())
        report = gast.Expr(value=self.seen(list(run.values()), values))
        run.clear()
        return [report]

    def loop(self, loop, names, key, bound):
        """``[loop]`` reported (its body reports, first, each name the loop binds and
        reads that is bound before it), and the names its body reports as targets;
        ``names``: ``loads_and_stores(loop)``."""
        loaded, stored = names
        carried = sorted(stored & bound & loaded)
        starts = []
        if carried:
            values = gast.Tuple(elts=[name(n) for n in carried], ctx=gast.Load())
            starts.append(gast.Expr(value=self.seen([(*key, n) for n in carried], values)))
        targets = set()
        body = self.body(loop.body, key, bound, targets)
        header = {f: _report_sites(getattr(loop, f), self.probe_name) for f in ("target", "iter")}
        orelse = [_report_sites(s, self.probe_name) for s in loop.orelse]
        return [_copied(loop, body=starts + body, orelse=orelse, **header)], targets

    def reported(self, stmt):
        """``stmt`` with its helper calls reported."""
        if self.holding is None or id(stmt) in self.holding:
            return _report_sites(stmt, self.probe_name)
        return stmt

    def statement(self, stmt, key):
        """``stmt`` with its helper calls reported, and its target, where it has one:
        ``x = seen(k, value)``; ``x += v; seen(k, x)``."""
        reported = self.reported(stmt)
        target = single_target(stmt)
        if target is None:
            return [reported]
        if isinstance(stmt, gast.Assign):
            return [_copied(reported, value=self.seen(key, reported.value))]
        return [reported, gast.Expr(value=self.seen(key, name(target)))]

    def seen(self, key, value):
        """``seen(k, value)``, ``k`` the number of ``key`` (a list of keys: ``value`` is
        the tuple of what each saw)."""
        self.keys.append(key)
        k = len(self.keys) - 1
        return gast.Call(func=name(self.seen_name), args=[const(k), value], keywords=[])


_SIMPLE = frozenset([gast.Assign, gast.AugAssign, gast.Expr])


def _bound_constant(stmt):
    """Whether ``stmt`` binds a name to a constant (``t = None``)."""
    return (
        stmt.__class__ is gast.Assign
        and stmt.targets[0].__class__ is gast.Name
        and stmt.value.__class__ is gast.Constant
    )


def _copied(node, **fields):
    new = node.__class__.__new__(node.__class__)
    new.__dict__.update(node.__dict__, **fields)
    return new


def observe(seen, index, value):
    """Record in ``seen`` the meta of the target of the statement at ``index``: the first
    one for a statement at the top; for one in a loop's body (a tuple ``index``; ending
    in a name for that name at the start of the body), the meta every iteration saw,
    or None where they differ (the rewrite then knows nothing of that name there).
    A list ``index``: ``value`` is the tuple of what each of its positions saw."""
    if index.__class__ is list:
        for one, v in zip(index, value):
            observe(seen, one, v)
        return
    old = seen.get(index, _UNSEEN)
    if old is _UNSEEN:
        seen[index] = meta(value)
    elif old is not None and index.__class__ is tuple and old != meta(value):
        seen[index] = None  # (where it is None already, nothing more is learned)


_UNSEEN = object()


def recorder(keys, seen):
    """The probe's ``seen(k, value)`` for one run: records ``value`` at ``keys[k]`` in
    ``seen`` (``observe``) and returns it. A loop's line is met once per iteration: its
    later iterations only compare (``same_meta``)."""
    get = seen.get

    def record(k, value):
        index = keys[k]
        cls = index.__class__
        if cls is tuple:
            old = get(index, _UNSEEN)
            if old is _UNSEEN:
                seen[index] = meta(value)
            elif old is not None and not same_meta(old, value):
                seen[index] = None
        elif cls is list:  # a run of a loop's lines, or the names carried into it
            for one, v in zip(index, value):
                old = get(one, _UNSEEN)
                if old is None:
                    continue  # nothing more is learned
                if old is _UNSEEN or one.__class__ is not tuple:
                    observe(seen, one, v)
                elif old is not _META_OF_TYPE.get(v.__class__) and not same_meta(old, v):
                    seen[one] = None
        else:
            observe(seen, index, value)
        return value

    return record


def same_meta(found, value):
    """Whether ``meta(value) == found``, most often without making the meta."""
    cls = value.__class__
    if cls is np.ndarray:
        if found[3] is cls and found[2] is value.dtype and found[1] == value.shape:
            return True
    else:
        by_type = _META_OF_TYPE.get(cls)
        if by_type is not None:
            return found == by_type
    return found == meta(value)


def call_recorder(sites):
    """The probe's ``probe(site, helper, *args)`` for one run: records the metas of the
    arguments at ``site`` in ``sites`` (a site in a loop is met once per iteration:
    ``merged``) and returns the helper's result."""

    def record(site, helper, *args):
        old = sites.get(site, _UNSEEN)
        if old is _UNSEEN:
            sites[site] = tuple(map(meta, args))
        elif old is not None and not (len(old) == len(args) and all(map(same_meta, old, args))):
            sites[site] = merged(old, tuple(map(meta, args)), helper.declared.shape_args)
        return helper(*args)

    return record


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


def _free_when_dead(groups):
    """The statements of ``groups`` (as ``_reported_groups`` makes them) with ``del t``
    after the last group that reads each value its own statements made outside a
    block, so that the first call holds no more arrays at once than the variant made
    from it."""
    made, last = set(), {}
    for i, (_, reads, binds) in enumerate(groups):
        made |= binds
        for n in reads:
            last[n] = i
    dead_after = {}
    for n, i in last.items():
        if n in made and not isinstance(groups[i][0][0], gast.Return):
            dead_after.setdefault(i, []).append(n)
    out = []
    for i, (statements, _, _) in enumerate(groups):
        out += statements
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
