"""Corpus files: one module per format, and reading and writing any of them.

Formats read by :func:`ldacli.corpora.formats.read.read_corpus` (``format="auto"`` recognises them by
content, :mod:`~ldacli.corpora.formats.detect`):

* ``uci`` -- UCI bag-of-words (:mod:`~ldacli.corpora.formats.uci`);
* ``ldac`` -- LDA-C (:mod:`~ldacli.corpora.formats.ldac`);
* ``text`` -- plain text, a file of one document per line or a folder of ``.txt`` files
  (:mod:`~ldacli.corpora.formats.text`);
* ``mtx``, ``npz`` -- Matrix Market and scipy sparse ``.npz`` (:mod:`~ldacli.corpora.formats.matrix`);
* ``shards`` -- a shard folder, read whole (:mod:`~ldacli.corpora.formats.shards`).

The bag-of-words formats take their words from a vocabulary file, one word per line, found
beside the corpus (:mod:`~ldacli.corpora.formats.vocab`). Every input may be gzip-compressed (recognised
by its magic bytes) and ``-`` reads standard input. Every problem with a file's content raises
:class:`~ldacli.errors.InputError` naming the file and, where there is one, the line.
:mod:`~ldacli.corpora.formats.write` writes the bag-of-words formats and shard folders.
"""
