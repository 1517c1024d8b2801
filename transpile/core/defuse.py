"""One def-use index of a function body: where each name is written and read.

Built in one walk over every statement (nested blocks included), and kept up to
date by the rewrites that use it (``rename``, ``forget``), so that a pass never
walks the whole body again after a change: copy propagation and friends look up
``writes[name]`` and ``reads[name]`` instead. The index is flow-insensitive; a
pass that needs an order uses ``position`` (statements numbered in program order,
the header of a compound statement before its body).
"""

import gast

from transpile.core.nodes import descendants, header, name_nodes


class Index:
    def __init__(self, body, only=None):
        self.writes = {}  # name -> [(Name node, statement)], in program order
        self.reads = {}  # name -> [(Name node, statement)], in program order
        self.position = {}  # id(statement) -> its number in program order
        self.only = only  # index only these names (None: every name)
        self._walk(body)

    def _walk(self, stmts):
        for s in stmts:
            self.add(s)
            for field in ("body", "orelse"):
                inner = getattr(s, field, None)
                if inner and isinstance(s, (gast.If, gast.For, gast.While)):
                    self._walk(inner)

    def add(self, stmt, names=None):
        """Index one statement (its header only, for a compound statement). ``names``:
        the ``gast.Name`` nodes of a simple statement (``name_nodes``' list), where the
        caller has walked it already."""
        self.position[id(stmt)] = len(self.position)
        if names is not None:
            nodes = names
        else:
            nodes = name_nodes(header(stmt))
            if isinstance(stmt, gast.For):
                nodes += name_nodes(stmt.target)
        only = self.only
        for n in nodes:
            if only is None or n.id in only:
                if isinstance(n.ctx, gast.Load):
                    self.reads.setdefault(n.id, []).append((n, stmt))
                elif isinstance(n.ctx, gast.Store):
                    self.writes.setdefault(n.id, []).append((n, stmt))
        if (
            isinstance(stmt, gast.AugAssign)
            and isinstance(stmt.target, gast.Name)
            and (only is None or stmt.target.id in only)
        ):
            # an accumulation reads the name it writes
            self.reads.setdefault(stmt.target.id, []).append((stmt.target, stmt))

    def write_count(self, name):
        return len(self.writes.get(name, ()))

    def read_count(self, name):
        return len(self.reads.get(name, ()))

    def reading(self, name):
        """The statements that read ``name``, each once, in program order."""
        return list({id(s): s for _, s in self.reads.get(name, ())}.values())

    def rename(self, old, new, writes=False):
        """Make every read of ``old`` (and with ``writes``, every write) one of ``new``."""
        tables = (self.reads, self.writes) if writes else (self.reads,)
        for table in tables:
            moved = table.pop(old, [])
            for node, _ in moved:
                node.id = new
            merged = table.setdefault(new, []) + moved
            merged.sort(key=lambda pair: self.position[id(pair[1])])
            table[new] = merged

    def forget(self, stmt):
        """Drop ``stmt`` (removed from the body) from the index."""
        for table in (self.reads, self.writes):
            for n in descendants(header(stmt)):
                if isinstance(n, gast.Name) and n.id in table:
                    table[n.id] = [e for e in table[n.id] if e[1] is not stmt]

    def drop_read(self, node):
        """The read ``node`` (a Name) is gone from the body."""
        entries = self.reads.get(node.id)
        if entries:
            self.reads[node.id] = [e for e in entries if e[0] is not node]

    def move_reads(self, old_stmt, new_stmt):
        """The reads indexed under ``old_stmt`` now sit in ``new_stmt`` (its expression
        was moved there); ``old_stmt``'s writes are forgotten."""
        names = {n.id for n in name_nodes(old_stmt)}
        for n in names:
            if n in self.reads:
                self.reads[n] = [
                    (node, new_stmt if st is old_stmt else st) for node, st in self.reads[n]
                ]
            if n in self.writes:
                self.writes[n] = [e for e in self.writes[n] if e[1] is not old_stmt]

    def written_after(self, name, stmt):
        """Whether ``name`` is written anywhere after ``stmt`` in program order."""
        here = self.position[id(stmt)]
        return any(self.position[id(w)] > here for _, w in self.writes.get(name, ()))
