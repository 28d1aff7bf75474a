"""`engram completion SHELL`: the script that makes the shell complete engram's commands and options."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer


class Shell(StrEnum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"
    powershell = "powershell"


INSTALL = {
    Shell.bash: 'eval "$(engram completion bash)"   # in ~/.bashrc',
    Shell.zsh: 'eval "$(engram completion zsh)"    # in ~/.zshrc, after compinit',
    Shell.fish: "engram completion fish > ~/.config/fish/completions/engram.fish",
    Shell.powershell: "engram completion powershell | Out-String | Invoke-Expression   # in $PROFILE",
}


def completion(shell: Annotated[Shell, typer.Argument(help="bash, zsh, fish or powershell.")]) -> None:
    """Print the shell completion script for SHELL. Load it with, for bash, `eval "$(engram completion bash)"`
    in ~/.bashrc (zsh: the same in ~/.zshrc; fish: save it under ~/.config/fish/completions/engram.fish)."""
    from typer._completion_shared import get_completion_script

    print(get_completion_script(prog_name="engram", complete_var="_ENGRAM_COMPLETE", shell=shell.value))
