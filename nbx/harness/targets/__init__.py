"""Targets: what a row of the precision table runs (nbx's op, a peer library's, any callable) and on
which operands, as the op's spec declares."""
