"""The issue model and reading an issue's markdown into code, signatures, environment and expectations."""
