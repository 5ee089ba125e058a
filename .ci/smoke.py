"""The base install (no extras), as a user gets it from the wheel: every module imports but an
extra's adapter (whose error names the extra), and `pagelens --help` and every command's
`--help` work. Run by `make smoke` in a fresh venv holding only the wheel and its dependencies."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pagelens
from pagelens.cli import command_paths
from pagelens.extras import EXTRAS, adapters

ADAPTERS = adapters()

failed = []
for m in pkgutil.walk_packages(pagelens.__path__, "pagelens."):
    if m.name.endswith("__main__"):
        continue
    try:
        importlib.import_module(m.name)
    except ImportError as e:
        extra = ADAPTERS.get(m.name)
        if extra is None or f"pip install 'pagelens[{extra}]'" not in str(e):
            failed.append(f"{m.name}: {e}")
for extra in EXTRAS.values():
    for module in extra.modules:
        try:
            importlib.import_module(module)
            failed.append(f"{module} is installed, but only the extra {extra.name} should bring it")
        except ImportError:
            pass

exe = str(Path(sys.executable).parent / "pagelens")
# Every command the parser has (none listed by hand here to fall behind it).
commands = command_paths()
if ("mcp",) not in commands or ("study", "run") not in commands:
    failed.append(f"the command walk missed commands: {commands}")
for cmd in commands:
    done = subprocess.run([exe, *cmd, "--help"], capture_output=True, text=True)
    if done.returncode != 0 or "usage:" not in done.stdout:
        failed.append(f"pagelens {' '.join(cmd)} --help: exit {done.returncode}: {done.stderr[-300:]}")
version = subprocess.run([exe, "--version"], capture_output=True, text=True)
if version.returncode != 0 or not version.stdout.startswith("pagelens "):
    failed.append(f"pagelens --version: {version.stderr[-300:]}")
if failed:
    print("base install: FAILED\n" + "\n".join(failed))
    sys.exit(1)
print(f"base install: {len(commands)} commands' --help, every module imported, no extra present")
