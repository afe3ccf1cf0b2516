"""``python -m ldacli``: the same as the ``ldacli`` command."""

from ldacli.cli import main

if __name__ == "__main__":
    main(prog_name="ldacli")
