"""Where a tree of ldacli (a checkout, or a commit's files unpacked by a benchmark that compares
builds) keeps its package: in ``src/`` up to 0.2, at the root since. One answer for every
benchmark that runs or reads another build."""

import os


def package_parent(root: str) -> str:
    """The folder that holds the ``ldacli`` package of the tree at ``root`` (what goes on
    PYTHONPATH to run that build)."""
    root = os.path.abspath(root)
    old = os.path.join(root, "src")
    return old if os.path.isdir(os.path.join(old, "ldacli")) else root


def package_folders(commit_files: list[str]) -> list[str]:
    """Of a commit's top-level names, the ones that hold the package (``src`` or ``ldacli``)."""
    return [n for n in ("src", "ldacli") if n in commit_files]
