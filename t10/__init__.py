"""T10 on xDSL."""
