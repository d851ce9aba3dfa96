"""Exact-key, strict-type pydantic models, one module per document family."""
