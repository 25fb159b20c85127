"""The one git layer: light CLI access for the hooks' hot path, and branch facts for ``pr``, ``submit`` and ``run``."""
