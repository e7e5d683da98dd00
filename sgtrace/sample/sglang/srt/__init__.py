# Sample written for sgtrace, shaped like SGLang; not SGLang code.
"""Serving runtime of the sample tree."""
