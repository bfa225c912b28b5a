"""The gate: a report against the committed budgets; its verdict is the exit status."""
