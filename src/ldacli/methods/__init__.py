"""The training methods (collapsed Gibbs, uncollapsed Gibbs, variational EM)."""
