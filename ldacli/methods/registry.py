"""The training methods by their ``--method`` name: adding a method is one module and one line
here. A leaf of the training package: what lists the methods (``info``, the report, the
driver) imports it without importing the driver."""

from __future__ import annotations

from ldacli.methods.base import Method
from ldacli.methods.cgs.method import CollapsedGibbs
from ldacli.methods.uncollapsed_gibbs import UncollapsedGibbs
from ldacli.methods.vem import VariationalEM

METHODS: dict[str, type[Method]] = {m.name: m for m in (CollapsedGibbs, VariationalEM, UncollapsedGibbs)}
DEFAULT_METHOD = "cgs"
