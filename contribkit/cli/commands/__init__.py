"""Click commands: thin shells that parse options, call the core and print the result."""
