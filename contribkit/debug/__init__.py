"""``contribkit debug``: presets and plan, running it, reading its logs, TORCH_LOGS names."""
