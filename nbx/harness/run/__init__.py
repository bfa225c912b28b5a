"""Running: the runner and its jobs, and their progress."""
