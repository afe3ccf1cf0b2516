"""The package version, recorded in every file ldacli writes."""

__version__ = "0.2.0"
