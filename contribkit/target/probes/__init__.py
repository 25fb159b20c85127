"""Scripts run inside the *target* interpreter. They are read as text, never imported here."""
