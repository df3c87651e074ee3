"""The command-line tools of a wheel (``pip install .``): the console
scripts of pyproject.toml's [project.scripts] run the executables the wheel
holds in attn/bin (their RUNPATH finds attn/lib) with the same arguments.
A CMake install has the tools in <prefix>/bin itself and needs none of
this."""

import os
import sys


def _run(name):
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "bin", name)
    if not os.access(path, os.X_OK):
        sys.exit(f"{name}: not part of this installation of the attn "
                 f"package ({path} is missing)")
    os.execv(path, [path] + sys.argv[1:])


def attn_compile():
    _run("attn-compile")


def attn_opt():
    _run("attn-opt")


def attn_run():
    _run("attn-run")


def attn_gpu_info():
    _run("attn-gpu-info")
