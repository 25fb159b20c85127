"""Wrappers that run user scripts in the target interpreter; read as text, never imported."""
