"""The ``ldacli`` command line (click), thin over the library: ``options`` makes each option from a
setting's declaration, ``exits`` turns errors into one line and an exit code, ``text`` is what the
commands print, ``commands`` the commands; ``former_options`` the hidden spellings of 0.2."""

from ldacli.cli.commands import main

__all__ = ["main"]
