"""Inputs: the cases of each suite (pure functions of their seed), the stratified tuples and the
bit-pattern ranges made on the device."""
