"""``contribkit run``: planning and running legs per device and interpreter, the run record, remote legs, probes of the target torch."""
