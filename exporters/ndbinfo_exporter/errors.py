"""The exporter's configuration error, shared by its readers (the option file, the web
config, the flags): it stops the exporter at start, and while it serves refuses what an
invalid web config would let through."""

from __future__ import annotations


class ConfigError(ValueError):
    """A configuration file is unusable; the message names the file and the problem."""
