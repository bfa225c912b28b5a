"""The harness, one folder a step of the pipeline: inputs -> run -> scoring -> gate -> report.

A folder imports only itself and the folders listed above it (tests/test_imports.py, HARNESS_ORDER):

    progress.py  progress display
    records/     the Measurement record; crash-safe files, and where the bank and budgets are found
    targets/     a row of the precision table (nbx's op, variant and dtype); peers (torch's table)
    inputs/      the cases of each suite; stratified tuples (device and numpy twin); bit-pattern ranges
    scoring/     the rule (one source, host and device), the host's scorer with mpmath, the device's
    suites/      what each suite measures: the bank, exhaustive sweeps, layouts, integer division, fast paths
    run/         the runner: jobs, shards
    gate/        budgets and the verdict
    report/      JSON, Markdown, JUnit and HTML; merge and diff
    api.py       the public API
"""
