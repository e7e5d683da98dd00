"""Stage 3: what is known of each file and of the whole tree, before any graph.

find's pass over a tree (``findpass``, ``scan``, ``ancestry``), what a module defines (``outline``) and
how values flow in one function (``body``, ``exprs``), the tree's words (``identifiers``), the content
store of all that by each file's digest (``store``, ``packing``), the pass of a graph over the tree on the
workers (``chunks``, ``prefetch``), and the lazy project index that answers the graph's questions
(``project``). It reads the files through :mod:`sgtrace.parse` and imports nothing from the stages above.
"""
