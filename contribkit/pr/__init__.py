"""Pull requests: gathering and drafting the body, checking it, labels, and ``submit``."""
