"""Files: atomic writes, locks, ``.npz`` archives and the table formats results are written in."""
