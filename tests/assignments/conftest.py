"""The graded suites also run outside this repository (the Gradescope autograder has its own
``pytest.ini``), so they register the markers they use themselves."""


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU and CuPy (skipped without one)")
