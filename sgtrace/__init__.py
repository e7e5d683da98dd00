"""sgtrace: find where SGLang sizes, caps and passes on its KV-cache pool, statically."""

__version__ = "0.2.0"
