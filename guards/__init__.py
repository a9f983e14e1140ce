"""guards: lint docker-compose LLM-serving estates and the claims they carry.

``guards.__version__`` is the installed distribution's version, which setuptools-scm takes
from the git tag when the package is built (pyproject.toml, ``[tool.setuptools_scm]``).
"""

# Read on first use, not at import: importlib.metadata costs about 30 ms of start-up, which
# only `guards --version`, SARIF and the editor server need to pay.
UNKNOWN_VERSION = "0+unknown"  # a checkout run without being installed (pip install -e .)


def __getattr__(name: str) -> str:
    if name != "__version__":
        raise AttributeError(f"module 'guards' has no attribute {name!r}")
    from importlib import metadata

    try:
        version = metadata.version("compose-guards")
    except metadata.PackageNotFoundError:
        version = UNKNOWN_VERSION
    globals()["__version__"] = version  # once per process
    return version
