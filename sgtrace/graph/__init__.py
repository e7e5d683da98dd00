"""Stage 4: the data-flow graph (networkx) built from the index, by slicing."""
