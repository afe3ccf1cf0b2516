"""Training: the driver (:mod:`ldacli.methods.driver`) and the methods it runs.

The driver owns everything around the steps; each method (a
:class:`~ldacli.methods.base.Method` in its own module: :mod:`~ldacli.methods.cgs.method`,
:mod:`~ldacli.methods.vem`, :mod:`~ldacli.methods.uncollapsed_gibbs`) supplies its settings, its state and
one step. Adding a method is one module and one line in ``registry.METHODS``.
"""
