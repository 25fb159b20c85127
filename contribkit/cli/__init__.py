"""The command line: the Click app, the options every command shares, output, and ``commands/`` (thin shells)."""
