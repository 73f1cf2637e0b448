"""World bundles: export, load, and the in-memory world."""
