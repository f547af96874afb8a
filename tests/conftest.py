"""Shared test configuration."""

# pytester runs small pytest sessions in a temp dir (the grading plugin's tests use it)
pytest_plugins = ["pytester"]
