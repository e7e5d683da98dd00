"""Stage 5: analyses over the data-flow graph."""
