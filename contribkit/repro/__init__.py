"""Turning a parsed issue into a repro folder whose script ends in a verdict."""
