"""Collapsed Gibbs sampling: the method and its engines.

Bottom up: :mod:`~ldacli.methods.cgs.shard` a shard (its tokens, topics and stream, and what the
kernels need of it), :mod:`~ldacli.methods.cgs.layouts` the topic-word counts in each kernel's
layout, :mod:`~ldacli.methods.cgs.sampler` what the engines share (the sampler kinds, the first
topics, the priors); the engines: :mod:`~ldacli.methods.cgs.threads` on local threads,
:mod:`~ldacli.methods.cgs.dask_client` on a Dask cluster, whose workers each run
:mod:`~ldacli.methods.cgs.dask_worker`'s actor, with :mod:`~ldacli.methods.cgs.dask_checkpoints`
the shard files they write; then
:mod:`~ldacli.methods.cgs.snapshots` the states phi and theta average and
:mod:`~ldacli.methods.cgs.method` the method the driver runs. This ``__init__`` imports nothing,
so importing one module of the package never imports the others.
"""
