"""Corpora: the corpus in memory, its counts, the tokenizer, the vocabulary rules, synthetic corpora, and
``formats/``, every corpus file format read and written."""
