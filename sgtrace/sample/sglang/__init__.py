# Sample written for sgtrace, shaped like SGLang; not SGLang code.
"""Embedded sample tree: a miniature of the SGLang serving runtime."""
