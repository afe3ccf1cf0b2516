"""The ``ldacli`` command line: a thin layer of click over the Python API.

stdout carries results only; notes, progress and errors go to stderr. Exit codes: 0 success,
1 for bad data and runtime errors, 2 for usage errors, 130 when stopped by a signal.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from contextlib import contextmanager

import click

from ldacli import __version__
from ldacli.corpus import read_corpus, write_corpus
from ldacli.errors import LdacliError
from ldacli.evaluate import perplexity as compute_perplexity
from ldacli.infer import DEFAULT_BURN_IN, DEFAULT_ITERATIONS, infer as run_infer
from ldacli.gibbs import train_gibbs
from ldacli.model import Model, checkpoint_method
from ldacli.train import DEFAULT_ALPHA, DEFAULT_BETA, DEFAULT_TOPICS, TrainingInterrupted, train as run_train
from ldacli.vem import DEFAULT_EM_TOL, DEFAULT_ESTEP_MAX_ITER, DEFAULT_ESTEP_TOL, train_vem

FORMATS = click.Choice(["auto", "uci", "ldac", "text"])


@contextmanager
def user_errors():
    """Report users' mistakes as one line on stderr with exit code 1 (130 for signals)."""
    try:
        yield
    except TrainingInterrupted as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(130)
    except LdacliError as exc:
        raise click.ClickException(str(exc)) from None
    except KeyboardInterrupt:
        click.echo("Error: interrupted", err=True)
        sys.exit(130)
    except OSError as exc:  # writing outputs: full disk, permissions, missing folder
        where = exc.filename or "output"
        raise click.ClickException(f"{where}: cannot write: {exc.strerror or exc}") from None


def _setup_logging(quiet: bool, verbose: bool) -> bool:
    """Send ldacli's log to stderr; returns whether a progress bar should be shown."""
    logger = logging.getLogger("ldacli")
    logger.handlers[:] = [logging.StreamHandler(sys.stderr)]
    logger.handlers[0].setFormatter(logging.Formatter("%(message)s"))
    logger.setLevel(logging.ERROR if quiet else logging.INFO if verbose else logging.WARNING)
    logger.propagate = False
    return not quiet and sys.stderr.isatty()


def _note(quiet: bool, message: str) -> None:
    if not quiet:
        click.echo(message, err=True)


def _check_output(ctx_param: str, path: str | None) -> None:
    if path is None:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise click.BadParameter(f"expected an existing folder for {path!r}, found none at {folder!r}", param_hint=ctx_param)


def corpus_options(pruning: bool):
    """The options that say how to read a corpus (pruning only where a vocabulary is built)."""

    def decorate(f):
        opts = [
            click.option("--format", "fmt", type=FORMATS, default="auto", show_default=True,
                         help="Corpus format; auto detects it from the content."),
            click.option("--vocab", type=str, default=None,
                         help="Vocabulary file, one word per line (UCI/LDA-C; found beside the "
                              "corpus by name when omitted). For text: a fixed vocabulary."),
        ]
        if pruning:
            opts += [
                click.option("--min-df", type=click.IntRange(min=1), default=1, show_default=True,
                             help="Text: drop words in fewer documents than this."),
                click.option("--max-df", type=click.FloatRange(0, 1, min_open=True), default=1.0,
                             show_default=True, help="Text: drop words in more than this fraction of documents."),
                click.option("--max-vocab", type=click.IntRange(min=1), default=None,
                             help="Text: keep only this many most frequent words."),
                click.option("--stop-words", default="english", show_default=True,
                             help="Text: 'english' (shipped list), 'none', or a file of words."),
            ]
        for opt in reversed(opts):
            f = opt(f)
        return f

    return decorate


def _read(path, fmt, vocab, quiet, **pruning):
    stop = pruning.pop("stop_words", "english")
    corpus = read_corpus(path, format=fmt, vocab=vocab,
                         stop_words=None if stop == "none" else stop, **pruning)
    for note in corpus.notes:
        _note(quiet, f"{path}: {note}")
    return corpus


quiet_option = click.option("-q", "--quiet", is_flag=True, help="No progress bar or notes; errors only.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ldacli")
def main():
    """Latent Dirichlet Allocation topic models from the command line.

    \b
    Examples:
      ldacli train docword.kos.txt.gz -k 20 --iterations 500 -o kos.npz
      ldacli topics kos.npz
      ldacli infer kos.npz new_docs.txt -o theta.tsv
      ldacli perplexity kos.npz heldout.ldac
    """


@main.command()
@click.argument("corpus")
@click.option("-o", "--output", required=True, help="Model file to write (.npz).")
@click.option("-k", "--topics", "n_topics", type=click.IntRange(min=1), default=None,
              help=f"Number of topics.  [default: {DEFAULT_TOPICS}]")
@click.option("--method", type=click.Choice(["cgs", "vem", "gibbs"]), default=None,
              help="cgs: collapsed Gibbs sampling; vem: variational EM (Blei, Ng & Jordan 2003); "
                   "gibbs: uncollapsed (blocked) Gibbs sampling.  [default: cgs, or the "
                   "checkpoint's method with --resume]")
@click.option("--iterations", type=click.IntRange(min=1), default=None,
              help="Sweeps (cgs, gibbs) or at most this many EM iterations (vem), counting those "
                   "before a --resume.  [default: 1000; vem: 100]")
@click.option("--alpha", type=click.FloatRange(0, min_open=True), default=None,
              help=f"Document-topic prior for EACH topic (not MALLET's sum over topics; "
                   f"the sum is K * alpha); vem starts from it and estimates an asymmetric "
                   f"alpha unless --fixed-alpha.  [default: {DEFAULT_ALPHA}]")
@click.option("--beta", type=click.FloatRange(0, min_open=True), default=None,
              help=f"Topic-word prior for each word (tomotopy's eta); vem starts from it and "
                   f"estimates it unless --fixed-eta.  [default: {DEFAULT_BETA}]")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="Threads for vem and gibbs (cgs runs on one); the result is the same for any "
                   "number.  [default: all cores]")
@click.option("--burn-in", type=click.IntRange(min=0), default=None,
              help="gibbs: sweeps discarded before averaging theta and phi.  [default: half of --iterations]")
@click.option("--estep-tol", type=click.FloatRange(0), default=None,
              help=f"vem: a document's E-step stops when fewer than this fraction of its tokens "
                   f"change topic in a round.  [default: {DEFAULT_ESTEP_TOL:g}]")
@click.option("--estep-max-iter", type=click.IntRange(min=1), default=None,
              help=f"vem: at most this many E-step rounds per document.  [default: {DEFAULT_ESTEP_MAX_ITER}]")
@click.option("--em-tol", type=click.FloatRange(0), default=None,
              help=f"vem: stop when an EM iteration raises the evidence lower bound by less than "
                   f"this (relative; 0: run all --iterations).  [default: {DEFAULT_EM_TOL:g}]")
@click.option("--smoothed/--no-smoothed", default=None,
              help="vem: Dirichlet(beta) prior on the topics with a variational posterior "
                   "(smoothed, the default), or topics as plain parameters.")
@click.option("--estimate-alpha/--fixed-alpha", default=None,
              help="vem: estimate alpha by Newton's method in every M-step (default), or keep --alpha.")
@click.option("--estimate-eta/--fixed-eta", default=None,
              help="vem, smoothed: estimate the topic prior (--beta) by Newton's method (default), or keep it.")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Random seed; without it fresh entropy is drawn and recorded in the model.")
@click.option("--checkpoint", type=str, default=None,
              help="Checkpoint file (.npz): written every --checkpoint-every sweeps, at the end, and on Ctrl-C/SIGTERM.")
@click.option("--checkpoint-every", type=click.IntRange(min=0), default=0, show_default=True,
              help="Sweeps (vem: EM iterations) between checkpoints (0: only at the end and on a signal).")
@click.option("--resume", type=str, default=None,
              help="Continue from this checkpoint; the result equals an uninterrupted run.")
@click.option("--loglik-every", type=click.IntRange(min=1), default=10, show_default=True,
              help="Sweeps between log-likelihood evaluations (for the trace and progress; vem "
                   "records the evidence lower bound every iteration).")
@corpus_options(pruning=True)
@quiet_option
@click.option("-v", "--verbose", is_flag=True, help="Log the log-likelihood as training goes.")
def train(corpus, output, n_topics, method, iterations, alpha, beta, threads, burn_in, estep_tol,
          estep_max_iter, em_tol, smoothed, estimate_alpha, estimate_eta, seed, checkpoint,
          checkpoint_every, resume, loglik_every, fmt, vocab, min_df, max_df, max_vocab, stop_words,
          quiet, verbose):
    """Fit an LDA model to CORPUS by collapsed Gibbs sampling (default), variational EM or
    uncollapsed Gibbs sampling (--method).

    CORPUS is a UCI docword file, an LDA-C file, a text file (one document per line), a folder
    of .txt files, or - for stdin; .gz is read transparently.

    \b
    Examples:
      ldacli train docword.kos.txt.gz -k 20 --iterations 500 --seed 1 -o kos.npz
      ldacli train notes.txt --min-df 5 --max-df 0.5 -k 50 -o notes.npz \\
          --checkpoint notes.ckpt.npz --checkpoint-every 100
      ldacli train notes.txt --min-df 5 --max-df 0.5 -o notes.npz --resume notes.ckpt.npz
      ldacli train docword.kos.txt.gz -k 20 --method vem --seed 1 -o kos-vem.npz
      ldacli train docword.kos.txt.gz -k 20 --method gibbs --iterations 500 --burn-in 200 -o kos-gibbs.npz
    """
    progress = _setup_logging(quiet, verbose)
    specific = {"gibbs": {"--burn-in": burn_in},
                "vem": {"--estep-tol": estep_tol, "--estep-max-iter": estep_max_iter, "--em-tol": em_tol,
                        "--smoothed/--no-smoothed": smoothed, "--estimate-alpha/--fixed-alpha": estimate_alpha,
                        "--estimate-eta/--fixed-eta": estimate_eta}}
    _check_output("-o/--output", output)
    _check_output("--checkpoint", checkpoint)
    if checkpoint and os.path.abspath(checkpoint) == os.path.abspath(output):
        raise click.BadParameter("the checkpoint and the model must be different files", param_hint="--checkpoint")
    with user_errors():
        if resume:
            stored = checkpoint_method(resume)
            if method is not None and method != stored:
                raise click.BadParameter(f"the checkpoint {resume} was written by --method {stored}, "
                                         f"found --method {method}", param_hint="--method")
            method = stored
        method = method or "cgs"
        for owner, options in specific.items():
            for name, value in options.items():
                if owner != method and value is not None:
                    raise click.BadParameter(f"applies to --method {owner} only, found --method {method}", param_hint=name)
        data = _read(corpus, fmt, vocab, quiet, min_df=min_df, max_df=max_df, max_vocab=max_vocab, stop_words=stop_words)
        _note(quiet, f"{corpus}: {data.n_docs} documents, {data.n_words} words, {data.n_tokens} tokens")
        t0 = time.perf_counter()
        common = dict(alpha=alpha, beta=beta, seed=seed, checkpoint=checkpoint,
                      checkpoint_every=checkpoint_every, resume=resume, progress=progress)
        if method == "vem":
            model = train_vem(data, n_topics, iterations=iterations or 100, threads=threads,
                              smoothed=smoothed, estimate_alpha=estimate_alpha, estimate_eta=estimate_eta,
                              estep_tol=estep_tol, estep_max_iter=estep_max_iter, em_tol=em_tol, **common)
        elif method == "gibbs":
            model = train_gibbs(data, n_topics, iterations=iterations or 1000, burn_in=burn_in,
                                threads=threads, loglik_every=loglik_every, **common)
        else:
            model = run_train(data, n_topics, iterations=iterations or 1000, loglik_every=loglik_every, **common)
        seconds = time.perf_counter() - t0
        model.save(output)
    ll = model.loglik_per_token[-1] if model.loglik_per_token.size else float("nan")
    if method == "vem":
        done = f"{model.params['iterations_done']} EM iterations" + (" (converged)" if model.params["converged"] else "")
        score = f"ELBO/token {ll:.4f}"
    else:
        done = f"{model.params['iterations']} sweeps"
        score = f"log-likelihood/token {ll:.4f}"
    _note(quiet, f"{output}: {model.n_topics} topics after {done} in {seconds:.1f} s, {score}, seed {model.params['seed']}")


@main.command()
@click.argument("model")
@click.option("-n", "--top-words", type=click.IntRange(min=1), default=10, show_default=True,
              help="Words shown per topic.")
@click.option("--format", "fmt", type=click.Choice(["text", "tsv", "json"]), default="text",
              show_default=True, help="Output format.")
def topics(model, top_words, fmt):
    """Show the most probable words of each topic of MODEL.

    \b
    Examples:
      ldacli topics kos.npz
      ldacli topics kos.npz -n 20 --format tsv > topics.tsv
      ldacli topics kos.npz --format json | jq '.topics[0]'
    """
    with user_errors():
        m = Model.load(model)
    tops = m.top_words(top_words)
    if fmt == "json":
        out = {"model": model, "topics": [
            {"topic": k, "alpha": float(m.alpha[k]),
             "words": [{"word": w, "probability": p} for w, p in words]}
            for k, words in enumerate(tops)]}
        click.echo(json.dumps(out, indent=2))
    elif fmt == "tsv":
        click.echo("topic\trank\tword\tprobability")
        for k, words in enumerate(tops):
            for r, (w, p) in enumerate(words, 1):
                click.echo(f"{k}\t{r}\t{w}\t{p:.6g}")
    else:
        width = len(str(len(tops) - 1))
        for k, words in enumerate(tops):
            click.echo(f"topic {k:>{width}}: " + "  ".join(f"{w} ({p:.3f})" for w, p in words))


@main.command()
@click.argument("model")
@click.argument("corpus")
@click.option("-o", "--output", required=True,
              help="Where to write theta: .npz (theta, doc_ids), .tsv or .csv (doc id, then one column per topic).")
@click.option("--iterations", type=click.IntRange(min=1), default=DEFAULT_ITERATIONS, show_default=True,
              help="Gibbs sweeps per document in all.")
@click.option("--burn-in", type=click.IntRange(min=0), default=DEFAULT_BURN_IN, show_default=True,
              help="Sweeps discarded before averaging theta over the rest.")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Random seed; without it fresh entropy is drawn and recorded in the output (.npz).")
@corpus_options(pruning=False)
@quiet_option
def infer(model, corpus, output, iterations, burn_in, seed, fmt, vocab, quiet):
    """Infer topic proportions of the documents in CORPUS under MODEL.

    Words are matched to the model's vocabulary by string; unknown words are dropped and
    counted on stderr.

    \b
    Examples:
      ldacli infer kos.npz new_docs.txt -o theta.tsv
      ldacli infer kos.npz docword.new.txt.gz --vocab vocab.new.txt -o theta.npz --seed 3
    """
    progress = _setup_logging(quiet, False)
    if not output.lower().endswith((".npz", ".tsv", ".csv")):
        raise click.BadParameter(f"expected a file name ending in .npz, .tsv or .csv, found {output!r}", param_hint="-o/--output")
    _check_output("-o/--output", output)
    if burn_in >= iterations:
        raise click.BadParameter(f"must be smaller than --iterations ({iterations}), found {burn_in}", param_hint="--burn-in")
    with user_errors():
        m = Model.load(model)
        data = _read_for_model(corpus, fmt, vocab, m, quiet)
        result, dropped = run_infer(m, data, iterations=iterations, burn_in=burn_in, seed=seed, progress=progress)
        result.save(output)
    _report_dropped(quiet, corpus, dropped, data.n_tokens)


def _read_for_model(corpus, fmt, vocab, model, quiet):
    """Read a corpus to be scored by ``model``: text is tokenised against the model's vocabulary."""
    data = read_corpus(corpus, format=fmt, vocab=vocab, stop_words=None,
                       fixed_vocab=None if vocab else model.vocab)
    for note in data.notes:
        _note(quiet, f"{corpus}: {note}")
    return data


def _report_dropped(quiet, corpus, dropped, total):
    if dropped:
        _note(quiet, f"{corpus}: dropped {dropped} of {total} tokens whose words the model does not know")


@main.command()
@click.argument("model")
@click.argument("corpus")
@click.option("--iterations", type=click.IntRange(min=1), default=DEFAULT_ITERATIONS, show_default=True,
              help="Gibbs sweeps per document to estimate theta from the observed half.")
@click.option("--burn-in", type=click.IntRange(min=0), default=DEFAULT_BURN_IN, show_default=True,
              help="Sweeps discarded before averaging theta.")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Random seed for the theta estimate; without it fresh entropy is drawn and printed.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of text.")
@corpus_options(pruning=False)
@quiet_option
def perplexity(model, corpus, iterations, burn_in, seed, as_json, fmt, vocab, quiet):
    """Held-out per-word perplexity of CORPUS under MODEL, by document completion.

    Each document's tokens (in word-id order) alternate between an observed half, from which
    theta is estimated with the topics fixed, and a scored half. Perplexity is
    exp(-log_likelihood / tokens scored), natural logs.

    \b
    Examples:
      ldacli perplexity kos.npz heldout.ldac
      ldacli perplexity kos.npz heldout.ldac --seed 1 --json
    """
    progress = _setup_logging(quiet, False)
    if burn_in >= iterations:
        raise click.BadParameter(f"must be smaller than --iterations ({iterations}), found {burn_in}", param_hint="--burn-in")
    with user_errors():
        m = Model.load(model)
        data = _read_for_model(corpus, fmt, vocab, m, quiet)
        result = compute_perplexity(m, data, iterations=iterations, burn_in=burn_in, seed=seed, progress=progress)
    _report_dropped(quiet, corpus, result["dropped_tokens"], data.n_tokens)
    result = {"model": model, "corpus": corpus, **result}
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    click.echo(f"estimator:       {result['estimator']} (theta from half of each document, the other half scored)")
    click.echo(f"documents:       {result['n_docs']}")
    click.echo(f"tokens scored:   {result['n_tokens']}")
    click.echo(f"log-likelihood:  {result['log_likelihood']:.6g} (natural log)")
    click.echo(f"perplexity:      {result['perplexity']:.6g}")
    click.echo(f"seed:            {result['seed']}")


@main.command()
@click.argument("source")
@click.option("-o", "--output", required=True, help="Bag-of-words file to write.")
@click.option("--vocab-out", default=None,
              help="Vocabulary file to write.  [default: the name the readers look for beside the output]")
@click.option("--to", "out_format", type=click.Choice(["ldac", "uci"]), default="ldac", show_default=True,
              help="Output format.")
@corpus_options(pruning=True)
@quiet_option
def convert(source, output, vocab_out, out_format, fmt, vocab, min_df, max_df, max_vocab, stop_words, quiet):
    """Turn a corpus (typically text) into a bag-of-words file plus a vocabulary file.

    With --vocab, the vocabulary is fixed (words outside it are dropped), so several corpora
    can share one vocabulary.

    \b
    Examples:
      ldacli convert docs.txt --min-df 5 --max-df 0.5 -o docs.ldac
      ldacli convert new_docs.txt --vocab docs.vocab -o new_docs.ldac
      ldacli convert docs/ --to uci -o docword.docs.txt
    """
    _setup_logging(quiet, False)
    _check_output("-o/--output", output)
    vocab_out = vocab_out or default_vocab_path(output, out_format)
    with user_errors():
        data = _read(source, fmt, vocab, quiet, min_df=min_df, max_df=max_df, max_vocab=max_vocab, stop_words=stop_words)
        write_corpus(data, output, vocab_out, format=out_format)
    _note(quiet, f"{output}: {data.n_docs} documents, {data.n_words} words, {data.n_tokens} tokens; vocabulary in {vocab_out}")


def default_vocab_path(output: str, out_format: str) -> str:
    """The vocabulary name the readers find on their own beside ``output``."""
    folder, name = os.path.split(output)
    if out_format == "uci" and name.startswith("docword."):
        stem = name[len("docword."):].removesuffix(".gz").removesuffix(".txt")
        return os.path.join(folder, f"vocab.{stem}.txt")
    stem = name.removesuffix(".gz")
    stem = os.path.splitext(stem)[0] if "." in stem else stem
    return os.path.join(folder, stem + ".vocab")
