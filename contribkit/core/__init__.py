"""What every stage shares: errors and exit codes, typed settings, the workspace, the cache, atomic writes, child processes and rendering."""
