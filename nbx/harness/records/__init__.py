"""Records: the Measurement and crash-safe files."""
