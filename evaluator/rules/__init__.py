"""Cross-field rules, one module per document, each returning violations."""
