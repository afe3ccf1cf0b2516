"""Collapsed Gibbs sampling: the method and its engines.

Bottom up: :mod:`~ldacli.methods.cgs.threads` the sampler on local threads (and, for now, the
count layouts and shards they share), :mod:`~ldacli.methods.cgs.dask_engine` the same blocks on
a Dask cluster with :mod:`~ldacli.methods.cgs.dask_checkpoints` the shard files its workers
write, and :mod:`~ldacli.methods.cgs.method` the method the driver runs. This ``__init__``
imports nothing, so importing one module of the package never imports the others.
"""
