"""The ``ldacli`` command line (click), thin over the library: ``options`` makes each option from a
setting's declaration, ``exits`` turns errors into one line and an exit code, ``text`` is what the
commands print, ``commands`` the commands; ``former_options`` the hidden spellings of 0.2.

The group, :data:`main`, is made here without them: ``ldacli --version`` and ``ldacli --help``
import neither the commands nor the library (every line of a crontab or a Makefile pays its
start-up), and the commands are made when one is first asked for.
"""

import click

from ldacli.cli.exits import Group
from ldacli.version import __version__

# Each command and what it does: the line `ldacli --help` lists, the commands' one source of it.
COMMANDS = {
    "convert": "Turn a corpus into bag-of-words files or a shard folder.",
    "diff": "Match two models' topics and say what moved.",
    "export": "Write a model's tables for other tools.",
    "history": "Follow each topic across the models of a schedule of retrains.",
    "infer": "Topic proportions of new documents.",
    "info": "What a model or checkpoint file holds.",
    "name": "Name a topic of a model.",
    "perplexity": "Held-out log-likelihood and perplexity of documents.",
    "report": "An interactive HTML report of a model.",
    "select-k": "Choose the number of topics.",
    "topics": "Each topic's top words, coherence and diagnostics.",
    "train": "Fit a topic model to a corpus.",
    "trends": "Topic shares by the documents' dates.",
}


class Commands(Group):
    """ldacli's group, whose commands (``ldacli.cli.commands``) are made when first needed: its
    list and their lines of help are :data:`COMMANDS`."""

    _loaded = False

    @property
    def commands(self) -> dict:
        if not self._loaded:
            self._loaded = True
            from ldacli.cli import commands

            for command in vars(commands).values():
                if isinstance(command, click.Command):
                    self.add_command(command)
        return self._commands

    @commands.setter
    def commands(self, value: dict) -> None:
        self._commands = value

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        cmd.short_help = COMMANDS[name or cmd.name]  # (a command without a line here is a mistake)
        super().add_command(cmd, name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name]) for name in self.list_commands(ctx)])


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ldacli", default=False)
def main():
    """Latent Dirichlet Allocation topic models from the command line.

    Examples:

    \b
        ldacli train docword.kos.txt.gz -k 20 --iterations 500 -o kos.npz
        ldacli topics kos.npz
        ldacli infer kos.npz new_docs.txt -o theta.tsv
        ldacli perplexity kos.npz heldout.ldac
        ldacli info kos.npz
        ldacli report kos.npz -o kos.html
        ldacli diff yesterday.npz today.npz
        ldacli history models/ -o history.html
        ldacli trends kos.npz --dates dates.txt --by month
        ldacli export kos.npz doc-topics -o theta.csv
        ldacli select-k docword.kos.txt.gz -k 5,10,20,50 --seeds 3 -o kos-k
        ldacli name kos.npz 3 "iraq war"
    """
    from ldacli.memory import return_freed_memory

    return_freed_memory()  # the process is the command's: large blocks go back to the system when freed


__all__ = ["main", "COMMANDS"]
