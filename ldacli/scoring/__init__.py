"""Documents and topics scored under a model's fixed topics: inference of new documents, held-out
perplexity, coherence and the diagnostics of every topic."""
