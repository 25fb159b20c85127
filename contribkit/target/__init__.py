"""Text run by the *target* interpreter (probes, wrappers, the repro runtime). Read as text, never imported by contribkit's own code except for reprolib's constants."""
