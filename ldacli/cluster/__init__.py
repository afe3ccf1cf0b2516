"""Dask clusters: the connection (``--scheduler``) and the local cluster only its owner can reach."""
