"""The harness, one folder a step of the pipeline: inputs -> run -> scoring -> records -> report.

    inputs/   the cases of each suite, the stratified tuples, bit-pattern ranges (made on the device)
    run/      the targets (nbx's ops, peers, callables), the runner and its jobs, progress
    scoring/  the rule (one source for host and device), the host's scorer with mpmath, the device's
    suites/   what each suite measures: the bank, exhaustive sweeps, layouts, integer division
    records/  the Measurement, budgets, the gate, crash-safe files
    report/   JSON, Markdown, JUnit and HTML; merge and diff
    api.py    the public API that the CLI, the runner and nbx.verify use
"""
