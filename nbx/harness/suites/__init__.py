"""Suites: what each measures (the bank, value sweeps decided on the host or the device, layouts,
integer division, the fast-path probe)."""
