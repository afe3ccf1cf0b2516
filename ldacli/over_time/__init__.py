"""Topics over time: a schedule's models followed (history), the documents' dates (trends), and their
outputs."""
