"""AutoVend: a data-grounded benchmark for agents that run a network of smart vending machines."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("autovend")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
