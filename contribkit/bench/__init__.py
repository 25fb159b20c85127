"""`contribkit bench`: before/after timings with torch.utils.benchmark, in the target interpreter."""
