"""Scoring: the rule that classifies a result against its truth (rule.py, one source for the host
and the device), the host's scorer with its mpmath decisions, and the device's."""
